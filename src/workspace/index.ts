/** The workspace module's public surface: checkouts, worktrees, garbage collection, path safety. */
export { type CheckoutResult, type EnsureCheckoutOptions, ensureCheckout } from './checkout.js';
export {
  emptyPools,
  type GcResult,
  type GcSelection,
  holdsWork,
  type KeptKind,
  type KeptWorktree,
  listKeptWorktrees,
  listStrayFiles,
  maintainCheckouts,
  parseDuration,
  removeStrayFiles,
  removeWorktrees,
  type StrayFile,
  selectForGc,
} from './gc.js';
export { GitCommandError, git, hasChanges, headCommit, isGitCheckout } from './git.js';
export {
  assertInside,
  assertSafeSegment,
  branchName,
  deliveryBranchName,
  isInside,
  sha256Hex,
  worktreeName,
  worktreePath,
  worktreesRoot,
} from './paths.js';
export {
  type DefaultBranch,
  type FinishedWorktree,
  type FinishWorktreeOptions,
  finishWorktree,
  inspectWorktree,
  type PreparedWorktree,
  type PrepareWorktreeOptions,
  prepareWorktree,
  remoteTrackingCommit,
  resolveDefaultBranch,
  type StartFrom,
  type WorktreeInspection,
} from './worktree.js';
