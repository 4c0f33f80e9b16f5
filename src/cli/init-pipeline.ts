/**
 * `curupira init --pipeline`: seed 001's issue-to-merge workflow for one repository, in five
 * automations (explore, triage, implement, shepherd, review) that hand items on through labels
 * and chains on an outcome (docs/pipeline.md). Every value is an ordinary key, commented, so a team
 * changes any of it in place.
 */

import { resultRules } from '../pipeline/steps.js';

export interface PipelineTemplate {
  repo: string;
  remote: string;
  alias: string;
  provider: string;
  profileLines: readonly string[];
  placeholder: boolean;
}

const RESULT_RULES = (outcomes: string, number?: string) => resultRules(outcomes.split(' '), number);

export function pipelineSettings(t: PipelineTemplate): string {
  const q = (value: string) => JSON.stringify(value);
  return `# curupira settings for an issue-to-merge pipeline, written by \`curupira init --pipeline\`.
#
# Five steps hand each item on through labels (docs/pipeline.md):
#   explore   (weekly)      files issues labelled needs-triage
#   triage    needs-triage  -> agent:ready | needs-info | duplicate
#   implement agent:ready   -> a pull request (deliver = "pr"), label taken off; noop: nothing delivered
#   shepherd  after implement on "implemented": follows the pull request to merge (merge = "auto")
#   review    open pull requests, once per head -> agent:approved | agent:changes-requested
#
# Check it:   curupira validate --explain   (each step's outcomes and handoffs; contacts nothing)
#             curupira doctor
# Inputs per run: curupira run --set focus=docs (the keys each automation lists in \`inputs\`).
# Every key is in docs/configuration.md. Labels and comments are GitHub writes: opt-in, per key.
# \`step\` fills in the step's keys a table leaves unset; they are written out below to be changed.
${t.placeholder ? '#\n# acme/api below is a placeholder: put your repository there (or run `curupira init --pipeline --repo OWNER/NAME`).\n' : ''}
[settings]
max_active_tasks = 2
max_item_failures = 3                   # an item failing this often in one step stops there
escalated_label = "agent:escalated"     # ... and gets this label until a person removes it
lease_ttl = "1 hour"                    # items are claimed while a step works on them

[settings.screening]
# See docs/screening.md: items are run when vouched for (a trusted author or labeller).
# classifier_model = "~/.curupira/models/prompt-guard"

[repositories.${t.alias}]
remote = ${q(t.remote)}

[agents.defaults]
profile = ${q(t.provider)}

[agents.profiles.${t.provider}]
provider = ${q(t.provider)}
${t.profileLines.join('\n')}
github_token = true                     # explore files issues with gh
# mcp_config = ["~/.curupira/result-tool.json"]  # the result tool: curupira mcp --run \${CURUPIRA_RUN_ID}

# 1. Explore: looks at the repository and files what it finds, for triage.
[automations.explore]
step = "explore"                         # the preset: any key below overrides it
trigger_type = "cron"
repository = ${q(t.alias)}
schedule = "0 6 * * 1"                  # Mondays 06:00
outcomes = ["filed"]
inputs = { focus = "anything", explore_batch = "5" }
prompt = """
Explore the repository, looking at \${focus}. File at most \${explore_batch} issues in ${t.repo}
with gh, each labelled needs-triage, one problem each, with the steps to see it. Never invent
work: when nothing is worth filing, say so. Follow AGENTS.md.
${RESULT_RULES('filed')}
"""

# 2. Triage: decides what each new issue needs.
[automations.triage]
step = "triage"
# trusted_label = "agent:trusted"       # put on items screening finds vouched for
repository = ${q(t.alias)}
repo = ${q(t.repo)}
labels = ["needs-triage"]
exclude_labels = ["agent:log", "agent:escalated"]
lease_ttl = "1 hour"
outcomes = ["ready-for-agent", "needs-info", "duplicate"]
# issues closed in the last 30 days with similar titles reach the prompt as \${duplicate_candidates}
dedupe_closed_days = 30
prompt = """
Triage issue #\${issue_number}: \${issue_title}

\${issue_body}

The item's labels and what the maintainers wrote they mean:
\${issue_label_descriptions}

Recently closed issues whose titles look like this one (none when empty):
\${duplicate_candidates}

Decide: ready-for-agent (clear, small, testable), needs-info (say what is missing), or duplicate
(of an open issue, or of one of those closed ones: give its link).
Change nothing in the repository. Follow AGENTS.md and the labels' descriptions.
${RESULT_RULES('ready-for-agent needs-info duplicate', '${issue_number}')}
"""

[automations.triage.handoffs.ready-for-agent]
remove_labels = ["needs-triage"]
add_labels = ["agent:ready"]

[automations.triage.handoffs.needs-info]
remove_labels = ["needs-triage"]
add_labels = ["needs-info"]

[automations.triage.handoffs.duplicate]
remove_labels = ["needs-triage"]
add_labels = ["duplicate"]

# 3. Implement: builds it with tests first and delivers a pull request.
[automations.implement]
step = "implement"
repository = ${q(t.alias)}
repo = ${q(t.repo)}
labels = ["agent:ready"]
exclude_labels = ["agent:escalated"]
linked_pull_request = false
lease_ttl = "3 hours"
outcomes = ["implemented"]
deliver = "pr"
# human_reviewer = ["your-login"]        # asked to review each delivered pull request
pr_draft = false
result_comment = true
# Step 4 (shepherd) is curupira following the pull request it delivered (docs/pull-requests.md):
merge = "auto"                          # merges once approved by a person with write access and green
update_branch = true                    # behind its base, checks green: GitHub updates the branch
resolve_conflicts = true                # a conflict: the agent merges the base and resolves
remediation_budget = 3                  # reviews and failing checks the agent answers (max_shepherd_attempts)
# human_merge_paths = ["migrations/**"] # files a person merges
prompt = """
Implement issue #\${issue_number}: \${issue_title}

\${issue_body}

Write the failing test first, then the change; commit on the current branch. When main already
does what the issue asks, change nothing and report noop. Follow AGENTS.md.
${RESULT_RULES('implemented', '${issue_number}')}
"""

[automations.implement.handoffs.implemented]
remove_labels = ["agent:ready"]

[automations.implement.handoffs.noop]
remove_labels = ["agent:ready"]

# 4. Shepherd: implement's keys above follow each pull request to merge (reviews and failing
#    checks answered, conflicts resolved, merged when approved and green). This chain runs after
#    each delivery (on = "implemented", never on a noop) and checks the branch.
[automations.shepherd]
step = "shepherd"
after = "implement"
on = "implemented"
repository = ${q(t.alias)}
outcomes = ["on-track", "needs-human"]
prompt = """
Pull request for \${upstream_item} was delivered from \${upstream_branch}:
\${upstream_outcome}

Check that the branch builds and its tests pass. Change nothing.
${RESULT_RULES('on-track needs-human')}
"""

# 5. Review: each head of an open pull request once; the verdict lands as a label.
[automations.review]
step = "review"
trigger_type = "github-pull-requests"
repository = ${q(t.alias)}
repo = ${q(t.repo)}
draft = false
once = "head"
worktree_from = "head"
lease_ttl = "1 hour"
outcomes = ["approve", "request-changes"]
prompt = """
Review pull request #\${pull_request_number} at \${pull_request_head_sha}: \${pull_request_title}

Read the diff against its base for correctness, regressions and missing tests. Change nothing.
${RESULT_RULES('approve request-changes', '${pull_request_number}')}
"""

[automations.review.handoffs.approve]
remove_labels = ["agent:changes-requested"]
add_labels = ["agent:approved"]
# review = "COMMENT"                     # also post the verdict as a pull-request review (APPROVE needs another account than the author)

[automations.review.handoffs.request-changes]
remove_labels = ["agent:approved"]
add_labels = ["agent:changes-requested"]
`;
}
