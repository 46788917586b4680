// Login throttle (docs/security.md, "Passwords and the login throttle"): one row per throttled subject (an account's
// UID, or the hash of a user name no account has), reserving attempts before the password is verified. Replaces
// login_failures, which counted after it. `subject` is at most ~70 characters whatever a client sends as user name;
// rows past window_end are dead and swept.
export default /* sql */ `
DROP TABLE login_failures;

CREATE TABLE login_attempts (
  subject    TEXT PRIMARY KEY,
  attempts   INTEGER NOT NULL,
  window_end INTEGER NOT NULL
);
CREATE INDEX login_attempts_window_end ON login_attempts(window_end);
`
