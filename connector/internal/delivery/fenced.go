package delivery

// FencedError reports that another mooncdc with the same name (the same
// transactional id) took over: this one must never write again.
type FencedError struct {
	TransactionalID string
	Err             error
}

func (e *FencedError) Error() string {
	return "fenced: the broker refused transactional id " + e.TransactionalID + "'s epoch: another mooncdc instance with the " +
		"same name took over, or the broker aborted the open transaction (a transaction timeout, a coordinator failure); this " +
		"one stops and writes nothing more. Run one instance per name; if no other runs, restart this one: it resumes from the " +
		"last commit (" + e.Err.Error() + ")"
}

func (e *FencedError) Unwrap() error { return e.Err }

// Fatal marks the error as one no retry fixes: another instance holds the
// transactional id.
func (e *FencedError) Fatal() {}
