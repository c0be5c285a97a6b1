package taskstore

import (
	"math/rand/v2"

	"github.com/a2amesh/a2amesh/a2a"
)

// index keeps tasks in List order (Cursor.Before), counting each subtree,
// so that a page is found in O(log n + page size) and the number of tasks
// updated at or after a time in O(log n). It is a treap: a binary search
// tree by cursor that is a heap by random priority, which keeps its depth
// logarithmic whatever order tasks arrive in. The zero value is empty.
type index struct{ root *node }

type node struct {
	key         Cursor
	task        *a2a.Task
	prio        uint64
	size        int // nodes in this subtree
	left, right *node
}

func sizeOf(n *node) int {
	if n == nil {
		return 0
	}
	return n.size
}

func (n *node) fix() { n.size = 1 + sizeOf(n.left) + sizeOf(n.right) }

func (ix *index) len() int { return sizeOf(ix.root) }

// insert adds task under key, which must not be in the index.
func (ix *index) insert(key Cursor, task *a2a.Task) {
	l, r := split(ix.root, key)
	ix.root = merge(merge(l, &node{key: key, task: task, prio: rand.Uint64(), size: 1}), r)
}

// remove deletes key from the index, if it is there.
func (ix *index) remove(key Cursor) {
	ix.root = remove(ix.root, key)
}

func remove(n *node, key Cursor) *node {
	switch {
	case n == nil:
		return nil
	case key.Before(n.key):
		n.left = remove(n.left, key)
	case n.key.Before(key):
		n.right = remove(n.right, key)
	default:
		return merge(n.left, n.right)
	}
	n.fix()
	return n
}

// set replaces the task under key, which must be in the index.
func (ix *index) set(key Cursor, task *a2a.Task) {
	for n := ix.root; n != nil; {
		switch {
		case key.Before(n.key):
			n = n.left
		case n.key.Before(key):
			n = n.right
		default:
			n.task = task
			return
		}
	}
}

// split divides a tree into the nodes before key and the others.
func split(n *node, key Cursor) (before, rest *node) {
	if n == nil {
		return nil, nil
	}
	if n.key.Before(key) {
		a, b := split(n.right, key)
		n.right = a
		n.fix()
		return n, b
	}
	a, b := split(n.left, key)
	n.left = b
	n.fix()
	return a, n
}

// merge joins two trees, every node of l before every node of r.
func merge(l, r *node) *node {
	switch {
	case l == nil:
		return r
	case r == nil:
		return l
	case l.prio > r.prio:
		l.right = merge(l.right, r)
		l.fix()
		return l
	}
	r.left = merge(l, r.left)
	r.fix()
	return r
}

// rank returns how many keys come before key.
func (ix *index) rank(key Cursor) int {
	n, count := ix.root, 0
	for n != nil {
		if n.key.Before(key) {
			count += sizeOf(n.left) + 1
			n = n.right
		} else {
			n = n.left
		}
	}
	return count
}

// ascend calls fn for the tasks after after (from the first when nil), in
// order, until fn returns false.
func (ix *index) ascend(after *Cursor, fn func(*a2a.Task) bool) {
	ascend(ix.root, after, fn)
}

func ascend(n *node, after *Cursor, fn func(*a2a.Task) bool) bool {
	for n != nil {
		if after == nil || after.Before(n.key) {
			if !ascend(n.left, after, fn) || !fn(n.task) {
				return false
			}
		}
		n = n.right
	}
	return true
}
