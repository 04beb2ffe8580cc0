"""Runs localstripe's aiohttp app on one host and port, its store pickled to a file we name.

`localstripe --port N` binds '::' (every interface) and pickles its store to the fixed /tmp/localstripe.pickle,
which it also loads on start unless told --from-scratch: two servers at once would share one store, and one run's
charges would outlive it. scripts/lib/localstripe-server.ts starts this instead, with a file in a throw-away
folder; nothing is loaded from disk.

Usage: python3 localstripe-launcher.py HOST PORT STORE_FILE
"""

import logging
import pickle
import sys

from aiohttp import web
from localstripe import resources
from localstripe.server import app


def main():
    host, port, store_file = sys.argv[1], int(sys.argv[2]), sys.argv[3]

    def dump_to_disk(store):
        with open(store_file, 'wb') as f:
            pickle.dump(store, f, protocol=pickle.HIGHEST_PROTOCOL)

    def refuse_to_load(store):
        raise RuntimeError('this launcher never loads a store from disk')

    # The store is written after every change (Store.__setitem__ and the server's save middleware both call it).
    resources.Store.dump_to_disk = dump_to_disk
    resources.Store.try_load_from_disk = refuse_to_load

    # Request lines and tracebacks on stderr: the TypeScript side keeps the tail for its error messages.
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format='%(name)s %(message)s')
    web.run_app(app, host=host, port=port, access_log=logging.getLogger('aiohttp.access'), print=None)


if __name__ == '__main__':
    main()
