/** No request waits longer than this for the database (a frozen server never answers). */
export const QUERY_DEADLINE_MS = 5_000;

/**
 * The time (ms since the epoch) by which a request's database work must be done. A request
 * takes one when it arrives and hands it to every store call it makes, so that a rate-limit
 * count and an insert together stay within one deadline. Passed explicitly rather than through
 * AsyncLocalStorage, whose promise hooks slow every await in the process.
 */
export type Deadline = number;

/** The deadline of a request arriving now; `ms` is injectable so that tests need not wait 5 s. */
export const requestDeadline = (ms = QUERY_DEADLINE_MS): Deadline => Date.now() + ms;
