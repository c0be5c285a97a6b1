package localcluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/a2amesh/a2amesh/deploy/k8s/render"
)

type deployment struct {
	w    render.Workload
	d    *appsv1.Deployment
	rev  int
	pods []*Pod // guarded by Cluster.mu once started
}

type statefulSet struct {
	w    render.Workload
	s    *appsv1.StatefulSet
	pods []*Pod // by ordinal; guarded by Cluster.mu once started
}

func (c *Cluster) startDeploymentPod(ctx context.Context, d *deployment) (*Pod, error) {
	node, err := c.schedule(d.d.Name)
	if err != nil {
		return nil, err
	}
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s-r%d-%s", d.d.Name, d.rev, hex.EncodeToString(b[:]))
	labels := maps.Clone(d.d.Spec.Template.Labels)
	return c.startPod(ctx, name, d.w, node, labels, netip.Addr{})
}

func (c *Cluster) startStatefulPod(ctx context.Context, s *statefulSet, ordinal int) (*Pod, error) {
	node, err := c.schedule(s.s.Name)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s-%d", s.s.Name, ordinal)
	labels := maps.Clone(s.s.Spec.Template.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels["statefulset.kubernetes.io/pod-name"] = name
	c.mu.Lock()
	a := c.stable[name]
	c.mu.Unlock()
	return c.startPod(ctx, name, s.w, node, labels, a)
}

// Rollout rolls a Deployment to a new revision of the same template, as
// `kubectl rollout restart` does: new pods are started and old ones
// terminated as the RollingUpdate strategy's maxSurge and maxUnavailable
// allow, an old pod only once enough new ones are ready (minReadySeconds
// counted). It returns when every old pod has terminated, with the errors
// of old pods that did not exit 0 within their grace period.
func (c *Cluster) Rollout(ctx context.Context, name string) error {
	c.mu.Lock()
	d, ok := c.deploys[name]
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("localcluster: no deployment %s", name)
	}
	want := int(d.w.Replicas)
	surge, unavailable, err := rollingBounds(d.d.Spec.Strategy, want)
	if err != nil {
		return fmt.Errorf("localcluster: deployment %s: %w", name, err)
	}
	c.mu.Lock()
	old := append([]*Pod(nil), d.pods...)
	d.rev++
	c.mu.Unlock()
	var fresh []*Pod
	var errs []error
	minReady := time.Duration(d.d.Spec.MinReadySeconds) * time.Second
	readySince := map[*Pod]time.Time{}
	available := func() int {
		n := 0
		for _, p := range fresh {
			if !p.Ready() {
				delete(readySince, p)
				continue
			}
			if _, ok := readySince[p]; !ok {
				readySince[p] = time.Now()
			}
			if time.Since(readySince[p]) >= minReady {
				n++
			}
		}
		return n
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for len(old) > 0 {
		for len(fresh) < want && len(old)+len(fresh) < want+surge {
			p, err := c.startDeploymentPod(ctx, d)
			if err != nil {
				return errors.Join(append(errs, err)...)
			}
			fresh = append(fresh, p)
		}
		oldAvailable := countReady(old)
		// Terminate as many old pods as keep at least want-unavailable
		// available.
		n := min(oldAvailable+available()-(want-unavailable), len(old))
		if n > 0 {
			var wg sync.WaitGroup
			perr := make([]error, n)
			for i, p := range old[:n] {
				wg.Add(1)
				go func() {
					defer wg.Done()
					perr[i] = p.terminate(ctx)
					c.forget(p)
				}()
			}
			wg.Wait()
			errs = append(errs, perr...)
			old = old[n:]
			continue
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return errors.Join(append(errs, fmt.Errorf("localcluster: rollout of %s: %w", name, ctx.Err()))...)
		}
	}
	c.mu.Lock()
	d.pods = fresh
	c.mu.Unlock()
	return errors.Join(errs...)
}

// rollingBounds resolves maxSurge (rounded up) and maxUnavailable (rounded
// down) against the replica count, with Kubernetes' defaults of 25 %.
func rollingBounds(s appsv1.DeploymentStrategy, want int) (surge, unavailable int, err error) {
	if s.Type == appsv1.RecreateDeploymentStrategyType {
		return 0, want, nil
	}
	def := intstr.FromString("25%")
	ms, mu := &def, &def
	if ru := s.RollingUpdate; ru != nil {
		if ru.MaxSurge != nil {
			ms = ru.MaxSurge
		}
		if ru.MaxUnavailable != nil {
			mu = ru.MaxUnavailable
		}
	}
	if surge, err = scaled(ms, want, true); err != nil {
		return 0, 0, err
	}
	if unavailable, err = scaled(mu, want, false); err != nil {
		return 0, 0, err
	}
	if surge == 0 && unavailable == 0 {
		// Kubernetes makes one unavailable rather than never progressing.
		unavailable = 1
	}
	return surge, unavailable, nil
}

func scaled(v *intstr.IntOrString, total int, up bool) (int, error) {
	if v.Type == intstr.Int {
		return v.IntValue(), nil
	}
	var pct int
	if _, err := fmt.Sscanf(v.StrVal, "%d%%", &pct); err != nil {
		return 0, fmt.Errorf("bad percentage %q", v.StrVal)
	}
	f := float64(pct) * float64(total) / 100
	if up {
		return int(math.Ceil(f)), nil
	}
	return int(math.Floor(f)), nil
}

// RolloutStatefulSet rolls a StatefulSet as its RollingUpdate strategy
// does: from the highest ordinal down, one pod at a time, each terminated,
// recreated under its name and address, and ready before the next.
func (c *Cluster) RolloutStatefulSet(ctx context.Context, name string) error {
	c.mu.Lock()
	s, ok := c.sets[name]
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("localcluster: no statefulset %s", name)
	}
	var errs []error
	for i := len(s.pods) - 1; i >= 0; i-- {
		if err := c.RestartStatefulPod(ctx, name, i); err != nil {
			errs = append(errs, err)
		}
		if err := c.waitPodReady(ctx, s, i); err != nil {
			return errors.Join(append(errs, err)...)
		}
	}
	return errors.Join(errs...)
}

// RestartStatefulPod terminates a StatefulSet's pod (unless it is already
// gone) and starts it again under the same name and address.
func (c *Cluster) RestartStatefulPod(ctx context.Context, name string, ordinal int) error {
	c.mu.Lock()
	s, ok := c.sets[name]
	var p *Pod
	if ok && ordinal < len(s.pods) {
		p = s.pods[ordinal]
	}
	c.mu.Unlock()
	if p == nil {
		return fmt.Errorf("localcluster: no pod %d of statefulset %s", ordinal, name)
	}
	var err error
	select {
	case <-p.done:
	default:
		err = p.terminate(ctx)
	}
	c.forget(p)
	np, serr := c.startStatefulPod(ctx, s, ordinal)
	if serr != nil {
		return errors.Join(err, serr)
	}
	c.mu.Lock()
	s.pods[ordinal] = np
	c.mu.Unlock()
	return err
}

func (c *Cluster) waitPodReady(ctx context.Context, s *statefulSet, ordinal int) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		c.mu.Lock()
		p := s.pods[ordinal]
		c.mu.Unlock()
		if p.Ready() {
			return nil
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("localcluster: %s not ready: %w", p.Name, ctx.Err())
		}
	}
}

// replace starts a pod of d for each of its pods among gone.
func (c *Cluster) replace(ctx context.Context, d *deployment, gone []*Pod) error {
	c.mu.Lock()
	var keep []*Pod
	lost := 0
	for _, p := range d.pods {
		if containsPod(gone, p) {
			lost++
		} else {
			keep = append(keep, p)
		}
	}
	c.mu.Unlock()
	for range lost {
		p, err := c.startDeploymentPod(ctx, d)
		if err != nil {
			return err
		}
		keep = append(keep, p)
	}
	c.mu.Lock()
	d.pods = keep
	c.mu.Unlock()
	return nil
}

func containsPod(pods []*Pod, p *Pod) bool {
	for _, q := range pods {
		if q == p {
			return true
		}
	}
	return false
}
