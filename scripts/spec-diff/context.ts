import type { RuleId } from './rules';

/** Where findings go, and what grading them needs: `push` looks each rule's level up in the rule table. */
export interface Ctx {
  push(rule: RuleId, pointer: string, message: string, side?: 'old' | 'new'): void;
  /** YYYY-MM-DD */
  today: string;
  deprecationDays: number;
  /** A parameter's or header's schema: its values are text on the wire (types compared as texts: textCovers). */
  textual?: boolean;
}
