/** Types for make-corpus.mjs (used by corpus.test.ts). */
export interface CorpusItem {
  id: string;
  label: 'attack' | 'benign';
  category: string;
  placement: string;
  kind: 'issue' | 'pull_request';
  title: string;
  body: string;
  author: string;
  comments: string[];
}
export interface CorpusSpec {
  name: string;
  seed: string;
  heldOut: boolean;
}
export const ATTACKS_PER_CORPUS: number;
export const BENIGN_PER_CORPUS: number;
export const CORPORA: CorpusSpec[];
export function makeCorpus(spec: CorpusSpec): CorpusItem[];
export function corpusPath(name: string): string;
export function serialize(items: CorpusItem[]): string;
