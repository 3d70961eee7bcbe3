// Command berth-helper is the program of Berth's helper image (see package
// helperbin). The Makefile builds it for each architecture an engine may
// have, before the server, which embeds it.
package main

import (
	"os"

	"github.com/berth-dev/berth/server/internal/helperbin"
)

func main() {
	os.Exit(helperbin.Main(os.Args[1:], os.Stdout, os.Stderr))
}
