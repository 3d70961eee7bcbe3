package jobs

// Counts returns how many jobs the registry holds by status: running ones,
// and finished ones still readable.
func (r *Registry) Counts() map[Status]int {
	out := map[Status]int{Running: 0, Done: 0, Error: 0}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sweepLocked()
	for _, j := range r.jobs {
		j.mu.Lock()
		out[j.status]++
		j.mu.Unlock()
	}
	return out
}
