package ittest

// Count runs a query returning one integer.
func (e *Env) Count(query string) int {
	e.T.Helper()
	var n int
	e.Scan(query, &n)
	return n
}
