package localcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// network is the cluster's pod network: a Linux bridge in the host's
// network namespace that carries one /16, the bridge's own address as the
// pods' gateway, Service addresses added to the bridge (so that the Service
// proxies, which run in the host namespace, can listen on them), and a
// network namespace per pod joined to the bridge by a veth pair. Pods reach
// each other and every Service address over the bridge without IP
// forwarding, which this machine leaves off.
type network struct {
	id     string // short and unique: it names the bridge, the netns and the veths
	bridge string
	prefix netip.Prefix
	gw     netip.Addr

	mu   sync.Mutex
	next netip.Addr // the next address to hand out
	// links are the veth ends left in the host namespace, by pod netns.
	links map[string]string
}

// newNetwork makes the bridge. Each cluster picks a random /16 inside
// 10.128.0.0/9 so that two test processes on one machine don't collide.
func newNetwork(ctx context.Context) (*network, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	id := hex.EncodeToString(b[:])
	prefix := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 128 | b[0]&0x7f, 0, 0}), 16)
	gw := prefix.Addr().Next()
	n := &network{id: id, bridge: "lc" + id, prefix: prefix, gw: gw, next: gw.Next(), links: map[string]string{}}
	// A bridge without an address of its own takes its ports' lowest,
	// which changes as pods come and go; every pod's ARP entry for the
	// gateway and the Services would then name a MAC that no longer
	// answers, and connections from pods would hang for as long as the
	// entry lives (seen: 10-30 s, whenever a pod was deleted).
	mac := fmt.Sprintf("02:00:%02x:%02x:%02x:01", b[0], b[1], b[2])
	if err := ipCmds(ctx,
		[]string{"link", "add", n.bridge, "address", mac, "type", "bridge"},
		[]string{"addr", "add", netip.PrefixFrom(gw, 16).String(), "dev", n.bridge},
		[]string{"link", "set", n.bridge, "up"},
	); err != nil {
		_ = ip(context.Background(), "link", "del", n.bridge)
		return nil, fmt.Errorf("localcluster: bridge: %w", err)
	}
	return n, nil
}

// addr hands out the next free address of the /16.
func (n *network) addr() (netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	a := n.next
	if !n.prefix.Contains(a.Next()) {
		return netip.Addr{}, fmt.Errorf("localcluster: %s is full", n.prefix)
	}
	n.next = a.Next()
	return a, nil
}

// serviceAddr adds an address to the bridge for a Service's proxy.
func (n *network) serviceAddr(ctx context.Context) (netip.Addr, error) {
	a, err := n.addr()
	if err != nil {
		return a, err
	}
	if err := ip(ctx, "addr", "add", netip.PrefixFrom(a, 32).String(), "dev", n.bridge); err != nil {
		return netip.Addr{}, err
	}
	return a, nil
}

// podNetns makes a network namespace with one interface, eth0, on the
// bridge, and returns its name and address: fixed when valid (a
// StatefulSet pod keeps its address across restarts, so that the hosts
// files naming it stay right), else the next free one.
func (n *network) podNetns(ctx context.Context, seq int, fixed netip.Addr) (ns string, a netip.Addr, err error) {
	a = fixed
	if !a.IsValid() {
		if a, err = n.addr(); err != nil {
			return "", a, err
		}
	}
	ns = fmt.Sprintf("lc%s-%d", n.id, seq)
	host := fmt.Sprintf("lc%s.%d", n.id, seq) // at most 15 bytes for seq < 10^7
	peer := host + "p"
	if len(peer) > 15 {
		return "", a, fmt.Errorf("localcluster: interface name %q too long", peer)
	}
	err = ipCmds(ctx,
		[]string{"netns", "add", ns},
		[]string{"link", "add", host, "type", "veth", "peer", "name", peer},
		[]string{"link", "set", peer, "netns", ns},
		[]string{"link", "set", host, "master", n.bridge, "up"},
		[]string{"-n", ns, "link", "set", peer, "name", "eth0"},
		[]string{"-n", ns, "addr", "add", netip.PrefixFrom(a, 16).String(), "dev", "eth0"},
		[]string{"-n", ns, "link", "set", "eth0", "up"},
		[]string{"-n", ns, "link", "set", "lo", "up"},
		[]string{"-n", ns, "route", "add", "default", "via", n.gw.String()},
	)
	if err != nil {
		_ = ip(context.Background(), "link", "del", host)
		_ = ip(context.Background(), "netns", "del", ns)
		return "", netip.Addr{}, fmt.Errorf("localcluster: pod network: %w", err)
	}
	n.mu.Lock()
	n.links[ns] = host
	n.mu.Unlock()
	return ns, a, nil
}

// cut takes a pod's link down or up: down, its packets go nowhere, as when
// its node is lost or partitioned, and connections to it hang rather than
// being refused.
func (n *network) cut(ctx context.Context, ns string, down bool) error {
	n.mu.Lock()
	host := n.links[ns]
	n.mu.Unlock()
	state := "up"
	if down {
		state = "down"
	}
	return ip(ctx, "link", "set", host, state)
}

// delNetns removes a pod's namespace (its veth pair goes with it) once no
// process is left in it.
func (n *network) delNetns(ns string) error {
	n.mu.Lock()
	host := n.links[ns]
	delete(n.links, ns)
	n.mu.Unlock()
	err := ip(context.Background(), "netns", "del", ns)
	if host != "" {
		_ = ip(context.Background(), "link", "del", host) // gone with the namespace, normally
	}
	_ = os.RemoveAll(filepath.Join("/etc/netns", ns))
	return err
}

func (n *network) close() error {
	n.mu.Lock()
	left := make([]string, 0, len(n.links))
	for ns := range n.links {
		left = append(left, ns)
	}
	n.mu.Unlock()
	for _, ns := range left {
		_ = n.delNetns(ns)
	}
	return ip(context.Background(), "link", "del", n.bridge)
}

func ipCmds(ctx context.Context, cmds ...[]string) error {
	for _, c := range cmds {
		if err := ip(ctx, c...); err != nil {
			return err
		}
	}
	return nil
}

func ip(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
