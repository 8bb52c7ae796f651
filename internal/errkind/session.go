package errkind

import "strings"

// staleSession starts the error adk-go's database session service returns for an append
// through a session read before the session's last update (session/database, applyEvent). It
// is a plain fmt.Errorf error: only its text identifies it.
const staleSession = "stale session error:"

// classifySession recognizes adk-go's session-service refusals that are not driver errors.
func classifySession(err error) (Kind, string, bool) {
	for e := range walk(err) {
		if strings.HasPrefix(e.Error(), staleSession) {
			return Conflict, "stale session: the session was written after it was read", true
		}
	}
	return "", "", false
}
