package api

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/berth-dev/berth/server/internal/dashboard"
	"github.com/berth-dev/berth/server/internal/jobs"
	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/version"
)

// metrics holds the collectors that live as long as the server: Go and
// process figures, and the duration of every HTTP request.
type metrics struct {
	registry *prometheus.Registry
	http     *prometheus.HistogramVec
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		http: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "berth_http_request_duration_seconds",
			Help:    "Duration of Berth's HTTP requests by route pattern, method and status class.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method", "status"}),
	}
	// A fresh registry and distinct collectors: registration cannot fail.
	_ = m.registry.Register(m.http)
	_ = m.registry.Register(collectors.NewGoCollector())
	_ = m.registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observeRequest records one request's duration: by gin's route pattern
// (never the raw path, whose ids would make a series per object; paths no
// route serves count as "other"), method and status class.
func (st *systemState) observeRequest(c *gin.Context, status int, d time.Duration) {
	if st.metrics == nil {
		return
	}
	route := c.FullPath()
	if route == "" {
		route = "other"
	}
	class := strconv.Itoa(status/100) + "xx"
	st.metrics.http.WithLabelValues(route, c.Request.Method, class).Observe(d.Seconds())
}

// envFigures are the figures of one environment gathered for a scrape.
type envFigures struct {
	stats dashboard.Stats
	host  *engine.HostInfo
}

// scrapeCollector reports the figures gathered for one scrape.
type scrapeCollector struct {
	envs   []envFigures
	jobs   map[jobs.Status]int
	agents int
}

var (
	envLabels      = []string{"environment_id", "environment"}
	descBuild      = prometheus.NewDesc("berth_build_info", "Berth's version (value 1).", []string{"version"}, nil)
	descUp         = prometheus.NewDesc("berth_environment_up", "Whether the environment's engine answered within the scrape's time limit.", envLabels, nil)
	descContainers = prometheus.NewDesc("berth_environment_containers", "Containers of the environment by state.", append(envLabels, "state"), nil)
	descUnhealthy  = prometheus.NewDesc("berth_environment_containers_unhealthy", "Containers whose health check fails.", envLabels, nil)
	descImages     = prometheus.NewDesc("berth_environment_images", "Images of the environment.", envLabels, nil)
	descImageBytes = prometheus.NewDesc("berth_environment_images_size_bytes", "Total size of the environment's images.", envLabels, nil)
	descVolumes    = prometheus.NewDesc("berth_environment_volumes", "Volumes of the environment.", envLabels, nil)
	descNetworks   = prometheus.NewDesc("berth_environment_networks", "Networks of the environment.", envLabels, nil)
	descStacks     = prometheus.NewDesc("berth_environment_stacks", "Stacks of the environment by status.", append(envLabels, "status"), nil)
	descCPUs       = prometheus.NewDesc("berth_environment_host_cpus", "CPUs of the environment's host.", envLabels, nil)
	descMemory     = prometheus.NewDesc("berth_environment_host_memory_bytes", "Memory of the environment's host.", envLabels, nil)
	descJobs       = prometheus.NewDesc("berth_jobs", "Long operations (pull, push, scan, deploys) held by this server, by status.", []string{"status"}, nil)
	descAgents     = prometheus.NewDesc("berth_agents_connected", "Edge agents connected to this server.", nil, nil)
)

func (sc *scrapeCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(sc, ch) }

func (sc *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descBuild, 1, version.Version)
	for _, e := range sc.envs {
		st := e.stats
		l := []string{strconv.FormatInt(st.ID, 10), st.Name}
		up := 0.0
		if st.Online {
			up = 1
		}
		gauge(descUp, up, l...)
		if !st.Online {
			continue
		}
		for state, n := range map[string]int{"running": st.Containers.Running, "stopped": st.Containers.Stopped,
			"paused": st.Containers.Paused, "restarting": st.Containers.Restarting} {
			gauge(descContainers, float64(n), append(l, state)...)
		}
		gauge(descUnhealthy, float64(st.Containers.Unhealthy), l...)
		gauge(descImages, float64(st.Images.Total), l...)
		gauge(descImageBytes, float64(st.Images.TotalSize), l...)
		gauge(descVolumes, float64(st.Volumes.Total), l...)
		gauge(descNetworks, float64(st.Networks.Total), l...)
		for status, n := range map[string]int{"running": st.Stacks.Running, "partial": st.Stacks.Partial,
			"stopped": st.Stacks.Stopped} {
			gauge(descStacks, float64(n), append(l, status)...)
		}
		if e.host != nil {
			gauge(descCPUs, float64(e.host.CPUs), l...)
			gauge(descMemory, float64(e.host.MemTotal), l...)
		}
	}
	for status, n := range sc.jobs {
		gauge(descJobs, float64(n), string(status))
	}
	gauge(descAgents, float64(sc.agents))
}

// prometheusMetrics answers the Prometheus text format: the server's own
// figures (requests, jobs, agents, Go runtime) and every environment's,
// gathered at scrape time from the engines, each within dashboard.Timeout
// (an environment that does not answer in time is berth_environment_up 0).
func (s *Server) prometheusMetrics(c *gin.Context) error {
	ctx := c.Request.Context()
	envs, err := s.store.ListEnvironments(ctx)
	if err != nil {
		return err
	}
	figures := s.gatherFigures(ctx, envs)
	sc := &scrapeCollector{envs: figures, jobs: s.jobs.Counts()}
	if s.agents != nil {
		sc.agents = s.agents.Connected()
	}
	scrape := prometheus.NewRegistry()
	if err := scrape.Register(sc); err != nil {
		return err
	}
	h := promhttp.HandlerFor(prometheus.Gatherers{s.sys.metrics.registry, scrape},
		promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	h.ServeHTTP(c.Writer, c.Request)
	return nil
}

// gatherFigures reads every environment's dashboard figures and host facts
// at the same time, each environment within dashboard.Timeout.
func (s *Server) gatherFigures(ctx context.Context, envs []store.Environment) []envFigures {
	out := make([]envFigures, len(envs))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, st := range s.dashboard.All(ctx, envs) {
			out[i].stats = st
		}
	}()
	hosts := make([]*engine.HostInfo, len(envs))
	var g errgroup.Group
	g.SetLimit(16)
	for i, env := range envs {
		g.Go(func() error {
			hctx, cancel := context.WithTimeout(ctx, dashboard.Timeout)
			defer cancel()
			done := make(chan *engine.HostInfo, 1) // buffered: a late answer never blocks
			go func() {
				h, err := s.sys.ops.Host(hctx, env)
				if err != nil {
					done <- nil
					return
				}
				done <- &h
			}()
			select {
			case hosts[i] = <-done:
			case <-hctx.Done():
			}
			return nil
		})
	}
	_ = g.Wait()
	wg.Wait()
	for i := range out {
		out[i].host = hosts[i]
	}
	return out
}
