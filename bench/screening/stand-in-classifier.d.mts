/** Types for stand-in-classifier.mjs (used by stand-in.test.ts). */
export function score(text: string): number;
