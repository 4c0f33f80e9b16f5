/** Types for hand-corpus.mjs (used by corpus.test.ts). */
export interface HandItem {
  id: string;
  label: 'attack' | 'benign';
  category: string;
  kind: 'issue' | 'pull_request';
  title: string;
  body: string;
  author: string;
  comments: string[];
}
export function handCorpus(): HandItem[];
