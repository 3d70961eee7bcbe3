package api

// RouteEntry is one route of the route table as the black-box tests see it.
type RouteEntry struct {
	Method, Path, Perm string
}

// RouteTable lists the route table (for api_test: sweeps over every route).
func RouteTable() []RouteEntry {
	var out []RouteEntry
	for _, rt := range (&Server{}).routes() {
		out = append(out, RouteEntry{rt.Method, rt.Path, string(rt.Perm)})
	}
	return out
}
