/** Raised by any store's repository when a write would break a uniqueness rule (a taken name). */
export class UniqueViolation extends Error {}
