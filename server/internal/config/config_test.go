package config

import (
	"io"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoad(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		args    []string
		want    Config
		wantErr bool
	}{
		{
			name: "defaults",
			want: Config{Port: 3000, DataDir: "./data", DatabaseURL: "data/berth.db", LogLevel: slog.LevelInfo, LocalSocket: "/var/run/docker.sock",
				AgentPort: 3001, AgentHeartbeat: 10 * time.Second, OutboundAllow: []string{"private"}},
		},
		{
			name: "environment",
			env: map[string]string{"PORT": "8080", "HOST": "127.0.0.1", "DATA_DIR": "/srv/berth", "LOG_LEVEL": "debug",
				"ENCRYPTION_KEY": "k", "DISABLE_LOCAL_LOGIN": "true", "DOCKER_SOCKET": "/run/d.sock"},
			want: Config{Host: "127.0.0.1", Port: 8080, DataDir: "/srv/berth", DatabaseURL: "/srv/berth/berth.db",
				EncryptionKey: "k", LogLevel: slog.LevelDebug, DisableLocalLogin: true, LocalSocket: "/run/d.sock",
				AgentHost: "127.0.0.1", AgentPort: 3001, AgentHeartbeat: 10 * time.Second, OutboundAllow: []string{"private"}},
		},
		{
			name: "agent port",
			env: map[string]string{"AGENT_PORT": "4001", "AGENT_TLS_CERT": "/c.pem", "AGENT_TLS_KEY": "/k.pem",
				"AGENT_PUBLIC_URL": "https://berth.example.com:443", "AGENT_HEARTBEAT": "2s", "AGENT_IMAGE": "registry.example/berth-agent:1"},
			args: []string{"-agent-host", "0.0.0.0"},
			want: Config{Port: 3000, DataDir: "./data", DatabaseURL: "data/berth.db", LogLevel: slog.LevelInfo, LocalSocket: "/var/run/docker.sock",
				AgentHost: "0.0.0.0", AgentPort: 4001, AgentPortSet: true, AgentTLSCert: "/c.pem", AgentTLSKey: "/k.pem",
				AgentPublicURL: "https://berth.example.com:443", AgentImage: "registry.example/berth-agent:1", AgentHeartbeat: 2 * time.Second, OutboundAllow: []string{"private"}},
		},
		{name: "agent port is the API's", env: map[string]string{"AGENT_PORT": "3000"}, wantErr: true},
		{
			name: "replica",
			env:  map[string]string{"DATABASE_URL": "postgres://u:p@db/berth", "REPLICA_HOST": "berth-2"},
			want: Config{Port: 3000, DataDir: "./data", DatabaseURL: "postgres://u:p@db/berth", LogLevel: slog.LevelInfo, LocalSocket: "/var/run/docker.sock",
				AgentPort: 3001, AgentHeartbeat: 10 * time.Second, OutboundAllow: []string{"private"}, ReplicaHost: "berth-2"},
		},
		{name: "replica on SQLite", env: map[string]string{"REPLICA_HOST": "berth-2"}, wantErr: true},
		{name: "replica without agent port", env: map[string]string{"DATABASE_URL": "postgres://db/b", "REPLICA_HOST": "b2", "AGENT_PORT": "0"}, wantErr: true},
		{name: "replica host is a URL", env: map[string]string{"DATABASE_URL": "postgres://db/b", "REPLICA_HOST": "http://b2"}, wantErr: true},
		{name: "agent cert without key", env: map[string]string{"AGENT_TLS_CERT": "/c.pem"}, wantErr: true},
		{name: "bad heartbeat", env: map[string]string{"AGENT_HEARTBEAT": "soon"}, wantErr: true},
		{
			name: "auto-update grace",
			env:  map[string]string{"AUTO_UPDATE_GRACE": "45s"},
			want: Config{Port: 3000, DataDir: "./data", DatabaseURL: "data/berth.db", LogLevel: slog.LevelInfo, LocalSocket: "/var/run/docker.sock",
				AgentPort: 3001, AgentHeartbeat: 10 * time.Second, AutoUpdateGrace: 45 * time.Second, OutboundAllow: []string{"private"}},
		},
		{name: "bad auto-update grace", env: map[string]string{"AUTO_UPDATE_GRACE": "0s"}, wantErr: true},
		{
			name: "flags win over environment",
			env:  map[string]string{"PORT": "8080", "DATABASE_URL": "postgres://u:p@db/berth"},
			args: []string{"-port", "9090", "-log-level", "warn"},
			want: Config{Port: 9090, DataDir: "./data", DatabaseURL: "postgres://u:p@db/berth", LogLevel: slog.LevelWarn, LocalSocket: "/var/run/docker.sock",
				AgentPort: 3001, AgentHeartbeat: 10 * time.Second, OutboundAllow: []string{"private"}},
		},
		{
			name: "trust boundaries",
			env: map[string]string{"TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.7", "EXTERNAL_STACK_ROOTS": "/opt/stacks,/srv/compose/",
				"OUTBOUND_ALLOW": "private,loopback"},
			want: Config{Port: 3000, DataDir: "./data", DatabaseURL: "data/berth.db", LogLevel: slog.LevelInfo, LocalSocket: "/var/run/docker.sock",
				AgentPort: 3001, AgentHeartbeat: 10 * time.Second,
				TrustedProxies:     []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32")},
				ExternalStackRoots: []string{"/opt/stacks", "/srv/compose"}, OutboundAllow: []string{"private", "loopback"}},
		},
		{
			name: "outbound none",
			env:  map[string]string{"OUTBOUND_ALLOW": "none"},
			want: Config{Port: 3000, DataDir: "./data", DatabaseURL: "data/berth.db", LogLevel: slog.LevelInfo, LocalSocket: "/var/run/docker.sock",
				AgentPort: 3001, AgentHeartbeat: 10 * time.Second, OutboundAllow: []string{}},
		},
		{name: "bad trusted proxy", env: map[string]string{"TRUSTED_PROXIES": "10.0.0.0/33"}, wantErr: true},
		{name: "relative stack root", env: map[string]string{"EXTERNAL_STACK_ROOTS": "stacks"}, wantErr: true},
		{name: "bad outbound allow", env: map[string]string{"OUTBOUND_ALLOW": "everything"}, wantErr: true},
		{name: "bad port", env: map[string]string{"PORT": "x"}, wantErr: true},
		{name: "port out of range", args: []string{"-port", "70000"}, wantErr: true},
		{name: "bad level", env: map[string]string{"LOG_LEVEL": "loud"}, wantErr: true},
		{name: "stray argument", args: []string{"extra"}, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Load(c.args, func(k string) string { return c.env[k] }, io.Discard)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(c.want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("Load (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReplicaAddresses(t *testing.T) {
	c := Config{Port: 3000, AgentPort: 3001, ReplicaHost: "fd00::2"}
	if !c.Replicated() || c.ReplicaHTTPURL() != "http://[fd00::2]:3000" || c.ReplicaRelayAddr() != "[fd00::2]:3001" {
		t.Fatalf("replica addresses: %v %q %q", c.Replicated(), c.ReplicaHTTPURL(), c.ReplicaRelayAddr())
	}
	if (Config{}).Replicated() {
		t.Fatal("a Berth without REPLICA_HOST is not a replica")
	}
}

func TestSQLitePath(t *testing.T) {
	for url, want := range map[string]string{"data/berth.db": "data/berth.db", "sqlite://x.db": "x.db", "postgres://h/db": ""} {
		if got := (Config{DatabaseURL: url}).SQLitePath(); got != want {
			t.Errorf("SQLitePath(%q) = %q, want %q", url, got, want)
		}
	}
}
