package engine

// ValidName reports whether name follows the engine's rule for container,
// volume and network names: [a-zA-Z0-9][a-zA-Z0-9_.-]*.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if i == 0 && !alnum || !alnum && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}
