package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// service is a ClusterIP Service: a proxy listening on the Service's
// address for each of its ports, in the place of kube-proxy. A headless
// Service has no proxy; its name resolves to its pods (see hostsFile).
type service struct {
	c   *Cluster
	svc corev1.Service
	ip  netip.Addr
	lns []net.Listener

	mu    sync.Mutex
	next  int
	conns map[net.Conn]struct{}
}

func (c *Cluster) startService(ctx context.Context, svc *corev1.Service) error {
	s := &service{c: c, svc: *svc, conns: map[net.Conn]struct{}{}}
	c.mu.Lock()
	c.services[svc.Name] = s
	c.mu.Unlock()
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return nil
	}
	a, err := c.net.serviceAddr(ctx)
	if err != nil {
		return err
	}
	s.ip = a
	for _, port := range svc.Spec.Ports {
		if port.Protocol != "" && port.Protocol != corev1.ProtocolTCP {
			return fmt.Errorf("localcluster: service %s: only TCP ports are proxied", svc.Name)
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(a.String(), strconv.Itoa(int(port.Port))))
		if err != nil {
			return fmt.Errorf("localcluster: service %s: %w", svc.Name, err)
		}
		s.lns = append(s.lns, ln)
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			s.accept(ln, port)
		}()
	}
	return nil
}

// ServiceAddr is where a Service's port is reached from the host, as a
// client outside the pods (an ingress controller, a test) reaches it.
func (c *Cluster) ServiceAddr(name string, port int) (string, error) {
	c.mu.Lock()
	s, ok := c.services[name]
	c.mu.Unlock()
	if !ok || !s.ip.IsValid() {
		return "", fmt.Errorf("localcluster: no ClusterIP service %s", name)
	}
	return net.JoinHostPort(s.ip.String(), strconv.Itoa(port)), nil
}

func (s *service) accept(ln net.Listener, port corev1.ServicePort) {
	for {
		conn, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return // closed by close
		}
		if err != nil {
			// Out of descriptors, say: the Service must not stop
			// accepting for good, which would leave every later
			// connection waiting in the backlog for an answer.
			s.c.connLog("%s accept on %s: %v\n", time.Now().Format("15:04:05.000"), s.svc.Name, err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		s.c.wg.Add(1)
		go func() {
			defer s.c.wg.Done()
			s.proxy(conn, port)
		}()
	}
}

// proxy sends one connection to the next ready endpoint that the
// NetworkPolicies let the caller reach. With none, or when the endpoint
// refuses, the connection is reset at once: kube-proxy rejects a
// connection to a Service without endpoints, and the caller sees it fail
// rather than hang.
func (s *service) proxy(in net.Conn, port corev1.ServicePort) {
	defer in.Close()
	from := netip.MustParseAddrPort(in.RemoteAddr().String()).Addr()
	dst, target, err := s.pick(from, port)
	if err != nil {
		s.c.connLog("%s refused: %s from %s: %v\n", time.Now().Format("15:04:05.000"), s.svc.Name, from, err)
		reset(in)
		return
	}
	// A pod that vanished between the choice and the dial is dropped
	// like a packet to a gone address is: the dial fails within seconds,
	// not at the kernel's two minutes.
	d := net.Dialer{Timeout: 3 * time.Second}
	dialStart := time.Now()
	out, err := d.DialContext(s.c.ctx, "tcp", net.JoinHostPort(dst.IP.String(), strconv.Itoa(target)))
	if err != nil {
		s.c.connLog("%s dial %s (%s) for %s from %s failed after %v: %v\n", time.Now().Format("15:04:05.000"), dst.Name, dst.IP, s.svc.Name, from, time.Since(dialStart).Round(time.Millisecond), err)
		reset(in)
		return
	}
	defer out.Close()
	if !s.track(in, out) {
		return
	}
	defer s.untrack(in, out)
	start := time.Now()
	src := from.String()
	if p := s.c.podByIP(from); p != nil {
		src = p.Name
	}
	id := s.c.connSeq.Add(1)
	s.c.connLog("%s #%d opened: %s %s -> %s:%d (%s)\n", start.Format("15:04:05.000"), id, s.svc.Name, src, dst.Name, target, dst.IP)
	// Either direction's end (or error) ends both: a connection to a
	// pod that is gone must not stay half open, answering nothing.
	done := make(chan struct{})
	var up int64
	go func() {
		defer close(done)
		up, _ = io.Copy(out, in)
		_ = out.Close()
		_ = in.Close()
	}()
	down, _ := io.Copy(in, out)
	_ = in.Close()
	_ = out.Close()
	<-done
	s.c.connLog("%s #%d closed after %v: %d bytes up, %d down\n", time.Now().Format("15:04:05.000"),
		id, time.Since(start).Round(time.Millisecond), up, down)
}

// reset makes closing c send a reset rather than an orderly end.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
}

func (s *service) track(conns ...net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil {
		return false
	}
	for _, c := range conns {
		s.conns[c] = struct{}{}
	}
	return true
}

func (s *service) untrack(conns ...net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range conns {
		delete(s.conns, c)
	}
}

func (s *service) close() {
	for _, ln := range s.lns {
		_ = ln.Close()
	}
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
}

// pick chooses the endpoint, round robin over the ready pods the selector
// matches and the caller may reach.
func (s *service) pick(from netip.Addr, port corev1.ServicePort) (*Pod, int, error) {
	sel := labels.SelectorFromSet(s.svc.Spec.Selector)
	src := s.c.podByIP(from)
	var eps []*Pod
	for _, p := range s.c.Pods("") {
		if len(s.svc.Spec.Selector) == 0 || !sel.Matches(labels.Set(p.Labels)) || !p.Ready() {
			continue
		}
		t, err := p.port(port.TargetPort.String())
		if err != nil || !s.c.Allowed(src, p, t) {
			continue
		}
		eps = append(eps, p)
	}
	if len(eps) == 0 {
		return nil, 0, errors.New("no endpoint")
	}
	sort.Slice(eps, func(i, j int) bool { return eps[i].Name < eps[j].Name })
	s.mu.Lock()
	p := eps[s.next%len(eps)]
	s.next++
	s.mu.Unlock()
	t, _ := p.port(port.TargetPort.String()) // resolved above
	return p, t, nil
}

// Endpoints returns the addresses (pod address and target port) a
// Service's port sends new connections to now: its ready pods, as an
// ingress controller that balances each request over a Service's
// endpoints sees them.
func (c *Cluster) Endpoints(name string, port int) ([]string, error) {
	c.mu.Lock()
	s, ok := c.services[name]
	c.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("localcluster: no service %s", name)
	}
	var sp *corev1.ServicePort
	for i := range s.svc.Spec.Ports {
		if int(s.svc.Spec.Ports[i].Port) == port {
			sp = &s.svc.Spec.Ports[i]
		}
	}
	if sp == nil {
		return nil, fmt.Errorf("localcluster: service %s has no port %d", name, port)
	}
	sel := labels.SelectorFromSet(s.svc.Spec.Selector)
	var out []string
	for _, p := range c.Pods("") {
		if !p.Ready() || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		if t, err := p.port(sp.TargetPort.String()); err == nil {
			out = append(out, net.JoinHostPort(p.IP.String(), strconv.Itoa(t)))
		}
	}
	return out, nil
}

func (c *Cluster) podByIP(a netip.Addr) *Pod {
	for _, p := range c.Pods("") {
		if p.IP == a {
			return p
		}
	}
	return nil
}

// Allowed reports whether the NetworkPolicies let pod src (nil: a client
// outside the pods, such as the ingress controller or a test) open a
// connection to port of pod dst: both src's egress and dst's ingress must
// allow it.
func (c *Cluster) Allowed(src, dst *Pod, port int) bool {
	ingress, egress := true, true
	var ingressRules, egressRules bool
	for _, np := range c.objs.NetworkPolicies {
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil {
			return false
		}
		if sel.Matches(labels.Set(dst.Labels)) && hasType(np, networkingv1.PolicyTypeIngress) {
			if !ingressRules {
				ingressRules, ingress = true, false
			}
			for _, r := range np.Spec.Ingress {
				if c.portsMatch(r.Ports, dst, port) && c.peersMatch(r.From, src) {
					ingress = true
				}
			}
		}
		if src != nil && sel.Matches(labels.Set(src.Labels)) && hasType(np, networkingv1.PolicyTypeEgress) {
			if !egressRules {
				egressRules, egress = true, false
			}
			for _, r := range np.Spec.Egress {
				if c.portsMatch(r.Ports, dst, port) && c.peersMatch(r.To, dst) {
					egress = true
				}
			}
		}
	}
	return ingress && egress
}

// hasType applies Kubernetes' default: a policy without policyTypes is an
// Ingress policy, and an Egress one too when it has egress rules.
func hasType(np *networkingv1.NetworkPolicy, t networkingv1.PolicyType) bool {
	if len(np.Spec.PolicyTypes) == 0 {
		return t == networkingv1.PolicyTypeIngress || len(np.Spec.Egress) > 0
	}
	for _, pt := range np.Spec.PolicyTypes {
		if pt == t {
			return true
		}
	}
	return false
}

func (c *Cluster) portsMatch(ports []networkingv1.NetworkPolicyPort, dst *Pod, port int) bool {
	if len(ports) == 0 {
		return true
	}
	for _, pp := range ports {
		if pp.Protocol != nil && *pp.Protocol != corev1.ProtocolTCP {
			continue
		}
		if pp.Port == nil {
			return true
		}
		n, err := dst.port(pp.Port.String())
		if err != nil {
			continue
		}
		end := n
		if pp.EndPort != nil {
			end = int(*pp.EndPort)
		}
		if port >= n && port <= end {
			return true
		}
	}
	return false
}

// peersMatch reports whether p (nil: outside the pods) is one of peers.
// Every pod is in the cluster's one namespace, which a namespaceSelector
// matches by its kubernetes.io/metadata.name label; a client outside the
// pods matches a namespaceSelector that does not select that namespace
// (the ingress controller's, say) and any ipBlock.
func (c *Cluster) peersMatch(peers []networkingv1.NetworkPolicyPeer, p *Pod) bool {
	if len(peers) == 0 {
		return true
	}
	nsLabels := labels.Set{"kubernetes.io/metadata.name": c.ns}
	for _, peer := range peers {
		if peer.IPBlock != nil {
			if p == nil {
				return true
			}
			if inBlock(peer.IPBlock, p.IP) {
				return true
			}
			continue
		}
		inNS := true
		if peer.NamespaceSelector != nil {
			nsSel, err := metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
			if err != nil {
				continue
			}
			inNS = nsSel.Matches(nsLabels)
			if p == nil && !inNS {
				return true
			}
		}
		if p == nil || !inNS {
			continue
		}
		if peer.PodSelector == nil {
			return true
		}
		podSel, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
		if err == nil && podSel.Matches(labels.Set(p.Labels)) {
			return true
		}
	}
	return false
}

func inBlock(b *networkingv1.IPBlock, a netip.Addr) bool {
	pfx, err := netip.ParsePrefix(b.CIDR)
	if err != nil || !pfx.Contains(a) {
		return false
	}
	for _, ex := range b.Except {
		if e, err := netip.ParsePrefix(ex); err == nil && e.Contains(a) {
			return false
		}
	}
	return true
}
