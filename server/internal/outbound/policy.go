// Package outbound guards the requests Berth makes on a user's behalf
// (git and registry URLs, webhooks, template URL sources, OIDC, LDAP,
// SMTP): a Policy says which address ranges they may reach, a dialer
// checks the address actually dialled (so a name that resolves, or
// re-resolves, to a refused address is refused too), and an HTTP client
// re-checks every redirect hop and drops credentials when a redirect leaves
// the origin they were sent to.
//
// Link-local addresses, unspecified and multicast addresses and the cloud
// metadata addresses and names are always refused; private (RFC 1918, ULA,
// CGNAT) and loopback ranges only unless the policy allows them.
package outbound

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/berth-dev/berth/shared/fault"
)

// Policy says which ranges beyond public addresses outbound requests may
// reach. The zero Policy allows public addresses only.
type Policy struct {
	AllowPrivate  bool `json:"allowPrivate"`
	AllowLoopback bool `json:"allowLoopback"`
}

// Allow names of OUTBOUND_ALLOW and of the admin setting.
const (
	AllowPrivate  = "private"
	AllowLoopback = "loopback"
)

// PolicyOf is the policy of a list of allowed ranges ("private",
// "loopback"); other names are ignored (config validates them).
func PolicyOf(allow []string) Policy {
	var p Policy
	for _, a := range allow {
		switch a {
		case AllowPrivate:
			p.AllowPrivate = true
		case AllowLoopback:
			p.AllowLoopback = true
		}
	}
	return p
}

// The rules a refusal names.
const (
	ruleNever    = "link-local and cloud metadata addresses are never allowed"
	ruleSpecial  = "unspecified, broadcast and multicast addresses are never allowed"
	rulePrivate  = "private addresses are not allowed; an admin can allow them with OUTBOUND_ALLOW or PUT /api/settings/outbound"
	ruleLoopback = "loopback addresses are not allowed; an admin can allow them with OUTBOUND_ALLOW or PUT /api/settings/outbound"
)

// metadataNames are the names cloud providers give their instance metadata
// services; they are refused before anything is resolved.
var metadataNames = map[string]bool{
	"metadata":                     true,
	"metadata.google.internal":     true,
	"metadata.goog":                true,
	"metadata.azure.com":           true,
	"metadata.azure.internal":      true,
	"instance-data":                true,
	"instance-data.ec2.internal":   true,
	"metadata.tencentyun.com":      true,
	"metadata.platformequinix.com": true,
}

// metadataAddrs are metadata service addresses outside the link-local
// range: AWS's IPv6 one, Alibaba's and Azure's wire server.
var metadataAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("fd00:ec2::254"):   true,
	netip.MustParseAddr("100.100.100.200"): true,
	netip.MustParseAddr("168.63.129.16"):   true,
}

var (
	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
	broadcast = netip.MustParseAddr("255.255.255.255")
)

// refusal is the 403 refusing a request to target by rule.
func refusal(target, rule string) error {
	return fault.New(fault.Forbidden, fmt.Sprintf("Outbound requests to %s are refused (%s)", target, rule))
}

// CheckName refuses a cloud metadata name (host without a port; a trailing
// dot and case do not matter). Addresses are checked by CheckAddr.
func CheckName(host string) error {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if metadataNames[h] || strings.HasSuffix(h, ".metadata.google.internal") {
		return refusal(host, ruleNever)
	}
	return nil
}

// CheckAddr refuses an address p does not allow; name, when not empty, is
// the host name that resolved to it and is named in the refusal.
func (p Policy) CheckAddr(ip netip.Addr, name string) error {
	ip = ip.Unmap()
	target := ip.String()
	if name != "" && name != target {
		target = fmt.Sprintf("%s (%s)", name, ip)
	}
	switch {
	case !ip.IsValid():
		return refusal(name, ruleSpecial)
	case ip.IsLinkLocalUnicast(), metadataAddrs[ip]:
		return refusal(target, ruleNever)
	case ip.IsUnspecified(), ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast(),
		ip == broadcast, thisNet.Contains(ip):
		return refusal(target, ruleSpecial)
	case ip.IsLoopback():
		if !p.AllowLoopback {
			return refusal(target, ruleLoopback)
		}
	case ip.IsPrivate(), cgnat.Contains(ip):
		if !p.AllowPrivate {
			return refusal(target, rulePrivate)
		}
	}
	return nil
}

// CheckHost refuses host (a name or an address, without a port) when it is
// a metadata name or when any address it resolves to is refused. Clients
// that dial through Dialer need not call it (the dial checks the address
// it uses); it is for those that cannot (SSH and git:// clones).
func (p Policy) CheckHost(ctx context.Context, host string) error {
	if err := CheckName(host); err != nil {
		return err
	}
	h := strings.Trim(host, "[]")
	if ip, err := netip.ParseAddr(h); err == nil {
		return p.CheckAddr(ip, "")
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", h)
	if err != nil {
		return nil // the connection fails on its own, with its own message
	}
	for _, a := range addrs {
		if err := p.CheckAddr(a, h); err != nil {
			return err
		}
	}
	return nil
}
