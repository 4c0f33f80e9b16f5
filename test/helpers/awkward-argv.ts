/**
 * Arguments that a shell or a naive parser would change: words with spaces, quotes, `$`, backticks
 * and a trailing backslash, a newline, an empty argument, one that looks like an assignment and one
 * that looks like an option. A program started with them must receive each exactly, as one argument.
 */
export const AWKWARD_ARGS: readonly string[] = [
  'two words',
  "it's $HOME `id` \\",
  'line\nbreak',
  '',
  'x=y',
  '-i',
];
