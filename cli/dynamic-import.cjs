/* global exports */
'use strict';
// Hand-written CommonJS, copied into the build as it is: tsc's CommonJS output turns `import()` into `require()`,
// which cannot take a file:// URL nor load an ES module on every Node.js the package supports. Here `import()`
// stays the real one, so `retrysafe mcp --tools` loads a team's module whether it is CommonJS or ESM.
exports.dynamicImport = (specifier) => import(specifier);
