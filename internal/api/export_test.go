package api

// Routes lists the route table as method, pattern and operation, for the
// tests that hold the OpenAPI document to it.
func Routes() [][3]string {
	var out [][3]string
	for _, rt := range new(Server).routes() {
		out = append(out, [3]string{rt.method, rt.pattern, rt.operation})
	}
	return out
}
