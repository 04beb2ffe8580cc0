// The tool retrysafe init writes; the consumer test puts that file itself here.
// eslint-disable-next-line local/no-reach-into -- a team's file that retrysafe init writes, not the engine
export * from '../../../cli/init/template/src/tools';
