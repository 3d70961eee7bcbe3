package api

import (
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/berth-dev/berth/server/internal/legal"
	"github.com/berth-dev/berth/shared/fault"
)

// aboutRoutes are the texts Berth carries about itself (its license and
// privacy statement) and its memory diagnostics.
func (s *Server) aboutRoutes() []route {
	return []route{
		{"GET", "/api/legal/license", Authenticated, NoEnv, "", false, s.legalText(legal.License, "License")},
		{"GET", "/api/legal/privacy", Authenticated, NoEnv, "", false, s.legalText(legal.Privacy, "Privacy statement")},
		// Administrators only (checked by the handler as well).
		{"GET", "/api/debug/memory", "settings:edit", NoEnv, "", false, s.debugMemory},
	}
}

var legalQuery = []queryParam{{"format", "string", "text: the raw text as text/plain instead of {content}"}}

// aboutOps document them.
var aboutOps = map[string]apiOp{
	"GET /api/legal/license": {Summary: "Berth's license ({content}, or the raw text with format=text; 404 when this build carries none)",
		Response: legalAnswer{}, Content: "text/plain", AlsoJSON: true, Query: legalQuery},
	"GET /api/legal/privacy": {Summary: "Berth's privacy statement: what it stores, and that it sends nothing home ({content}, or the raw text with format=text)",
		Response: legalAnswer{}, Content: "text/plain", AlsoJSON: true, Query: legalQuery},
	"GET /api/debug/memory": {Summary: "Memory diagnostics of the Berth process (administrators only)", Response: memoryAnswer{},
		Query: []queryParam{{"gc", "boolean", "run a garbage collection first"}}},
}

// legalAnswer is a text as JSON.
type legalAnswer struct {
	Content string `json:"content"`
}

// legalText answers the carried text name (title names it in messages).
func (s *Server) legalText(name, title string) handler {
	return func(c *gin.Context) error {
		format := c.Query("format")
		if format != "" && format != "text" && format != "json" {
			return fault.New(fault.Invalid, "format must be text or json")
		}
		text, err := legal.Text(name)
		if errors.Is(err, legal.ErrMissing) {
			return fault.New(fault.NotFound, title+" not found: this build carries none")
		}
		if err != nil {
			return err
		}
		if format == "text" {
			c.Data(http.StatusOK, "text/plain; charset=utf-8", []byte(text))
			return nil
		}
		return writeJSON(c, http.StatusOK, legalAnswer{Content: text})
	}
}

// memoryAnswer is the process's memory: the reference's sections, with the
// Go runtime's figures (v8Heap holds the Go heap's). Sizes are in bytes.
type memoryAnswer struct {
	Timestamp   time.Time     `json:"timestamp"`
	Uptime      memoryUptime  `json:"uptime"`
	GCForced    bool          `json:"gcForced"`
	GCAvailable bool          `json:"gcAvailable"`
	Goroutines  int           `json:"goroutines"`
	Process     memoryProcess `json:"process"`
	Growth      memoryGrowth  `json:"growth"`
	V8Heap      memoryHeap    `json:"v8Heap"`
	System      memorySystem  `json:"system"`
}

type memoryUptime struct {
	Ms    int64   `json:"ms"`
	Hours float64 `json:"hours"`
	Human string  `json:"human"`
}

// memoryProcess is what the process holds from the operating system.
type memoryProcess struct {
	Sys        uint64 `json:"sys"`        // every byte obtained from the OS
	HeapSys    uint64 `json:"heapSys"`    // heap address space
	StackSys   uint64 `json:"stackSys"`   // goroutine stacks
	Goroutines int    `json:"goroutines"` // live goroutines
	Human      string `json:"human"`      // Sys, readable
}

// memoryGrowth is the allocation since start.
type memoryGrowth struct {
	TotalAlloc     uint64  `json:"totalAlloc"`    // bytes allocated since start (even if freed)
	AllocPerHour   uint64  `json:"allocPerHour"`  // TotalAlloc over the uptime
	Mallocs        uint64  `json:"mallocs"`       // objects allocated since start
	Frees          uint64  `json:"frees"`         // objects freed since start
	GCCPUFraction  float64 `json:"gcCpuFraction"` // share of CPU time the GC used
	NumGC          uint32  `json:"numGc"`         // collections since start
	LastGC         string  `json:"lastGc"`        // time of the last collection ("" none)
	PauseTotalNano uint64  `json:"pauseTotalNs"`  // total stop-the-world pause
	NextGC         uint64  `json:"nextGc"`        // heap size of the next collection
}

// memoryHeap is the heap now.
type memoryHeap struct {
	HeapAlloc    uint64 `json:"heapAlloc"`    // live and not yet freed objects
	HeapInuse    uint64 `json:"heapInuse"`    // spans in use
	HeapIdle     uint64 `json:"heapIdle"`     // spans not in use
	HeapReleased uint64 `json:"heapReleased"` // returned to the OS
	HeapObjects  uint64 `json:"heapObjects"`  // live objects
	Human        string `json:"human"`        // HeapAlloc, readable
}

// memorySystem is the machine as the runtime sees it.
type memorySystem struct {
	CPUs      int    `json:"cpus"`
	Platform  string `json:"platform"`
	Arch      string `json:"arch"`
	GoVersion string `json:"goVersion"`
}

// humanBytes is n in the largest binary unit under it.
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

func (s *Server) debugMemory(c *gin.Context) error {
	if !callerIsAdmin(c) {
		return fault.New(fault.Forbidden, "Admin access required")
	}
	gc, err := queryBool(c, "gc", false)
	if err != nil {
		return err
	}
	if gc {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	now := time.Now()
	up := now.Sub(s.sys.started)
	perHour := uint64(0)
	if h := up.Hours(); h > 0 {
		perHour = uint64(float64(m.TotalAlloc) / h)
	}
	lastGC := ""
	if m.LastGC > 0 {
		lastGC = time.Unix(0, int64(m.LastGC)).UTC().Format(time.RFC3339Nano)
	}
	n := runtime.NumGoroutine()
	return writeJSON(c, http.StatusOK, memoryAnswer{
		Timestamp: now.UTC(), GCForced: gc, GCAvailable: true, Goroutines: n,
		Uptime: memoryUptime{Ms: up.Milliseconds(), Hours: up.Hours(),
			Human: fmt.Sprintf("%dh %dm", int(up.Hours()), int(up.Minutes())%60)},
		Process: memoryProcess{Sys: m.Sys, HeapSys: m.HeapSys, StackSys: m.StackSys, Goroutines: n, Human: humanBytes(m.Sys)},
		Growth: memoryGrowth{TotalAlloc: m.TotalAlloc, AllocPerHour: perHour, Mallocs: m.Mallocs, Frees: m.Frees,
			GCCPUFraction: m.GCCPUFraction, NumGC: m.NumGC, LastGC: lastGC, PauseTotalNano: m.PauseTotalNs, NextGC: m.NextGC},
		V8Heap: memoryHeap{HeapAlloc: m.HeapAlloc, HeapInuse: m.HeapInuse, HeapIdle: m.HeapIdle,
			HeapReleased: m.HeapReleased, HeapObjects: m.HeapObjects, Human: humanBytes(m.HeapAlloc)},
		System: memorySystem{CPUs: runtime.NumCPU(), Platform: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version()},
	})
}
