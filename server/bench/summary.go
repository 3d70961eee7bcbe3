package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// printGoals repeats the figures of this run that issue 23's goals name,
// each next to its goal. It reports; it does not judge.
func printGoals(out io.Writer, cfg config, g *goals) {
	fmt.Fprintln(out, "\nissue 23 and 24 goals, figures of this run (goal in brackets):")
	if l := g.load; l.measured {
		fmt.Fprintf(out, "  %d lists/s + %d event streams for %v through Berth: %d list errors [0], %d event stream errors; p50 %s ms, p99 %s ms [<= 250 ms]; engine list calls %.2f/s [<= 10/s], coalescing ratio %.1f; engine event streams opened since Berth started %d\n",
			cfg.load.rate, cfg.load.clients, cfg.load.duration, l.errors, l.streamErrors, ms(l.p50), ms(l.p99), l.engineListsPerS, l.coalescing, l.engineStreams)
		fmt.Fprintf(out, "  the same load straight at the engine: %d errors, p50 %s ms, p99 %s ms (Berth/raw p99 %.2fx)\n",
			l.rawErrors, ms(l.rawP50), ms(l.rawP99), ratio(l.p99, l.rawP99))
	}
	if g.warm > 0 {
		fmt.Fprintf(out, "  container list, running containers, Berth/raw: warm %.2fx [<= 1.0x]", g.warm)
		if g.cold > 0 {
			fmt.Fprintf(out, ", cold %.2fx [<= 1.3x]", g.cold)
		}
		fmt.Fprintln(out)
	}
	if g.stats > 0 {
		fmt.Fprintf(out, "  stats pass over %d running containers, Berth/raw full fan-out: %.2fx [<= 1.0x]\n", g.statsN, g.stats)
	}
	if g.stalled > 0 {
		fmt.Fprintf(out, "  start-to-ready with the engine stalled: %v, answering %v (%.2fx) [start-up never waits on an engine]\n",
			g.stalled.Round(time.Millisecond), g.answering.Round(time.Millisecond), ratio(g.stalled, g.answering))
	}
	if b := g.backup; b.measured {
		fmt.Fprintf(out, "  backup of a %d MiB volume through Berth: %.2fx the time of restic by hand, restore %.2fx; RSS of Berth's runner %.1f MB before, %.1f MB peak [the data does not pass through it]\n",
			b.mib, ratio(b.berthBackup, b.rawBackup), ratio(b.berthRest, b.rawRestore), float64(b.rssBefore)/(1<<20), float64(b.rssPeak)/(1<<20))
	}
	if r := g.replicas; r.measured && r.missing > 0 {
		fmt.Fprintf(out, "  %d simulated edge agents over %d replicas: NOT ALL CONNECTED, %d missing after %v [all connected]\n",
			r.agents, cfg.replicas, r.missing, connectLimit)
	} else if r.measured && r.backMissing > 0 {
		fmt.Fprintf(out, "  %d simulated edge agents over %d replicas: all connected in %.2f s; of the %d agents of the killed replica, %d not back after %v [within seconds]\n",
			r.agents, cfg.replicas, r.connected.Seconds(), r.moved, r.backMissing, connectLimit)
	} else if r.measured {
		rss := make([]string, len(r.rss))
		for i, b := range r.rss {
			rss[i] = fmt.Sprintf("%.0f", float64(b)/(1<<20))
		}
		fmt.Fprintf(out, "  %d simulated edge agents over %d replicas: all connected in %.2f s [all connected]; RSS per replica %s MB; the %d agents of the killed replica back through the others in %.2f s [within seconds]\n",
			r.agents, len(r.rss), r.connected.Seconds(), strings.Join(rss, " / "), r.moved, r.back.Seconds())
	}
}
