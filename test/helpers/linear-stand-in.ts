/** The Linear stand-in lives beside the simulator (it also serves `curupira simulator --trackers`). */
export * from '../../src/simulator/linear-stand-in.js';
