/**
 * What makes a piece of hidden or decoded text an instruction: the payload checks of the other
 * scanners, reused. Used by hidden-content (comments, alt text, collapsed blocks) and
 * encoded-payload (decoded base64 / hex / rot13).
 */
import { AGENT_VOCATIVE, DIRECTIVE } from '../lexicon.js';
import { hasAgentConfigRequest } from './agent-config.js';
import { hasCredentialRequest } from './credential-fishing.js';
import { hasExfiltration } from './exfiltration.js';
import { hasOverride } from './instruction-override.js';
import { hasIntent } from './intent.js';
import { hasRoleSpoof } from './role-spoofing.js';

export type Signal = 'payload' | 'addressed-directive' | 'addressed' | 'shell-directive';

const SHELL =
  /\b(?:curl|wget|bash\s+-c|sh\s+-c|rm\s+-rf|chmod\s+\+x|sudo|eval|npm\s+publish|git\s+push|gh\s+(?:secret|auth|api|pr|issue|repo)|nc\s+-e|python\s+-c|node\s+-e|powershell)\b/iu;

/** The strongest signal in `text`, or undefined when it reads as plain prose. */
export function instructionSignal(text: string): Signal | undefined {
  if (hasOverride(text) || hasExfiltration(text) || hasCredentialRequest(text) || hasRoleSpoof(text))
    return 'payload';
  if (hasAgentConfigRequest(text) || hasIntent(text)) return 'payload';
  const addressed = AGENT_VOCATIVE.test(text);
  const directive = DIRECTIVE.test(text);
  if (addressed && directive) return 'addressed-directive';
  if (SHELL.test(text) && directive) return 'shell-directive';
  if (addressed) return 'addressed';
  return undefined;
}
