package analysis

// A ChainFolder folds recursion out of chains, as the chains a user is
// shown fold it (package query's Folder is one): Fold returns the chain
// of a call of fn made inside a call of chain c (nil for no call), and
// its number, the same for every path that folds to the same chain.
//
// Analyze needs one only to count a chain's time under a filter. A
// chain's total holds its outermost calls, and nested calls of the same
// chain are inside them. Left out by a filter (-F, a window, --panics),
// an outer call no longer holds the inner ones it leaves in, and which
// calls of the tree fold into one chain depends on the folding.
type ChainFolder interface {
	Fold(c any, fn uint32) (any, int32)
}

// chainFold counts each chain's time, and its slowest calls, once
// through recursion, when a filter may have left out the outer calls of
// a chain and kept inner ones (Options.Chains).
type chainFold struct {
	f ChainFolder
	// of are the nodes' folds: beside the tree, not in its nodes, which
	// a recursion a million calls deep has a million of.
	of      map[*Node]*nodeFold
	slowest int // calls kept by chain (Options.Slowest)
	// shownCounts says every call the filter shows is counted: none is
	// left out by its duration or how it ended.
	shownCounts bool
}

// nodeFold is what chainFold keeps of a node.
type nodeFold struct {
	chain any // folded
	k     int32
	// up is the depth of the innermost of its callers of the same chain,
	// or -1: as Node.up, known when the node is made.
	up int32
	// The time of its calls counted that no counted call of the same
	// chain holds, and the slowest of such calls of the chain where
	// this node is the outermost.
	total int64
	slow  []Instance
	// last is the child last called, and its fold: a call's callee is
	// often its previous one's, found so without the map.
	last     *Node
	lastFold *nodeFold
}

// chainFrame is what chainFold keeps of an open call.
type chainFrame struct {
	fold *nodeFold // its node's
	// inner is the time of calls of the chain inside this one that the
	// chain's total already holds, as frame.inner for a function's.
	inner int64
	// slow are the slowest calls of the chain inside this one not inside
	// another counted: the chain's slowest if this one is left out.
	slow []Instance
}

// enter makes the nodeFold of node n, called with the goroutine's stack
// as stack, if it has none, and pushes the call's chainFrame on chains.
func (cf *chainFold) enter(n *Node, stack []frame, chains []chainFrame) []chainFrame {
	var caller *nodeFold // of n.Parent
	if len(chains) > 0 {
		caller = chains[len(chains)-1].fold
	}
	var fd *nodeFold
	if caller != nil && caller.last == n {
		fd = caller.lastFold
	} else {
		fd = cf.of[n]
	}
	if fd == nil {
		var parent any
		if caller != nil {
			parent = caller.chain
		}
		fd = &nodeFold{up: -1}
		fd.chain, fd.k = cf.f.Fold(parent, n.Func)
		// A caller of the same chain is a caller of the same function.
		for up := n.up; up >= 0; up = stack[up].node.up {
			if chains[up].fold.k == fd.k {
				fd.up = up
				break
			}
		}
		cf.of[n] = fd
	}
	if caller != nil {
		caller.last, caller.lastFold = n, fd
	}
	var slow []Instance
	if len(chains) < cap(chains) {
		slow = chains[:len(chains)+1][len(chains)].slow[:0] // the slot's list, reused
	}
	return append(chains, chainFrame{fold: fd, slow: slow})
}

// exit counts call in, whose chainFrame tops chains, counted or left out
// by the filter, the goroutine's stack below it being stack, and pops
// the chainFrame.
func (cf *chainFold) exit(in Instance, counted bool, stack []frame, chains []chainFrame) []chainFrame {
	fr := &chains[len(chains)-1]
	chains = chains[:len(chains)-1]
	fd := fr.fold
	inner, slow := fr.inner, fr.slow
	if counted {
		fd.total += in.Dur - fr.inner
		inner, slow = in.Dur, nil
		if cf.slowest > 0 {
			slow = append(fr.slow[:0], in)
		}
	}
	if fd.up < 0 {
		// Outermost: its slowest are the chain's.
		for _, c := range slow {
			fd.slow = keepSlowest(fd.slow, c, cf.slowest)
		}
		return chains
	}
	up := &chains[fd.up]
	up.inner += inner
	if cf.shownCounts && stack[fd.up].shown {
		return chains // the call around holds these, and is counted
	}
	for _, c := range slow {
		up.slow = keepSlowest(up.slow, c, cf.slowest)
	}
	return chains
}

// keepSlowest adds call c to calls, which keeps the n slowest.
func keepSlowest(calls []Instance, c Instance, n int) []Instance {
	if len(calls) < n {
		return append(calls, c)
	}
	last := 0
	for i := range calls {
		if Slower(calls[last], calls[i]) {
			last = i
		}
	}
	if Slower(c, calls[last]) {
		calls[last] = c
	}
	return calls
}

// ChainTotal returns the time of node n's calls that the total of its
// chain, recursion folded, holds, and slowest calls of the chain, when
// the analysis had to work them out call by call (a filter, with
// Options.Chains); ok is false otherwise, when the outermost nodes of
// each chain hold its calls.
func (p *Profile) ChainTotal(n *Node) (total int64, slowest []Instance, ok bool) {
	if p.chains == nil {
		return 0, nil, false
	}
	fd := p.chains.of[n]
	if fd == nil {
		return 0, nil, true
	}
	return fd.total, fd.slow, true
}
