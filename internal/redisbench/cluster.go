package redisbench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// clusterSlots is the number of hash slots in a Redis Cluster.
const clusterSlots = 16384

// clusterNode is one master the benchmark sends to.
type clusterNode struct {
	name   string
	ep     endpoint
	slots  atomic.Pointer[[]int] // the slots it serves; replaced whole on a refresh
	config *serverConfig
}

// clusterConfig is the cluster as discovered with CLUSTER NODES.
type clusterConfig struct {
	nodes     []*clusterNode
	refreshMu sync.Mutex // one slot refresh at a time; others go on with the old map
}

// fetchClusterConfig reads the masters and their slots from the entry node,
// with the C tool's messages for each way this can fail.
func fetchClusterConfig(ctx context.Context, d *dialer, ep endpoint, auth []string, warn func(string)) (*clusterConfig, error) {
	failed := fmt.Sprintf("Failed to fetch cluster configuration from %s", ep)
	s, err := openSetupConn(ctx, d, ep, auth)
	if err != nil {
		return nil, err
	}
	defer s.shut()
	v, err := s.do("CLUSTER", "NODES")
	if err != nil {
		return nil, fmt.Errorf("%s", failed)
	}
	if e, ok := v.(replyError); ok {
		return nil, fmt.Errorf("Cluster node %s replied with error:\n%s\n%s", ep, string(e), failed)
	}
	text, _ := v.(string)
	nodes, warnings, err := parseClusterNodes(text, ep)
	for _, w := range warnings {
		warn(w)
	}
	if err != nil {
		return nil, fmt.Errorf("%s\n%s", err.Error(), failed)
	}
	if len(nodes) <= 1 {
		return nil, fmt.Errorf("Invalid cluster: %d node(s).", len(nodes))
	}
	return &clusterConfig{nodes: nodes}, nil
}

// parseClusterNodes reads CLUSTER NODES text: masters with their slot ranges,
// replicas skipped, migrating and importing entries ignored. The entry node
// (flag myself) keeps the address the user gave unless the reply names another.
func parseClusterNodes(text string, entry endpoint) ([]*clusterNode, []string, error) {
	var nodes []*clusterNode
	var warnings []string
	for _, line := range strings.Split(text, "\n") {
		if line == "" {
			continue
		}
		fields := strings.Split(line, " ")
		if len(fields) < 3 {
			return nil, warnings, fmt.Errorf("Invalid CLUSTER NODES reply: missing flags.")
		}
		name, addr, flags := fields[0], fields[1], fields[2]
		masterID := ""
		if len(fields) > 3 {
			masterID = fields[3]
		}
		if strings.Contains(flags, "slave") || (masterID != "" && masterID[0] != '-') {
			continue
		}
		if addr == "" {
			return nil, warnings, fmt.Errorf("Invalid CLUSTER NODES reply: missing addr.")
		}
		if at := strings.IndexByte(addr, '@'); at >= 0 {
			addr = addr[:at]
		}
		ep := endpoint{}
		if colon := strings.LastIndexByte(addr, ':'); colon >= 0 {
			ep.host, ep.port = addr[:colon], atoi(addr[colon+1:])
		}
		if strings.Contains(flags, "myself") && ep.host == "" {
			ep = endpoint{host: entry.host, port: entry.port}
		}
		node := &clusterNode{name: name, ep: ep}
		var slots []int
		if len(fields) > 8 {
			for _, def := range fields[8:] {
				if def == "" || def[0] == '[' {
					continue
				}
				if dash := strings.IndexByte(def, '-'); dash >= 0 {
					for s := atoi(def[:dash]); s <= atoi(def[dash+1:]); s++ {
						slots = append(slots, s)
					}
				} else {
					slots = append(slots, atoi(def))
				}
			}
		}
		if len(slots) == 0 {
			warnings = append(warnings, fmt.Sprintf("WARNING: Master node %s has no slots, skipping...", ep))
			continue
		}
		node.slots.Store(&slots)
		nodes = append(nodes, node)
	}
	return nodes, warnings, nil
}

// nodeForClient is the master that client number index talks to: spread by
// client number when there are fewer threads than masters, otherwise by the
// client's thread, as the C tool assigns them.
func (cc *clusterConfig) nodeForClient(index, threads int) *clusterNode {
	if threads < len(cc.nodes) {
		return cc.nodes[index%len(cc.nodes)]
	}
	return cc.nodes[(index%threads)%len(cc.nodes)]
}

// writeTag overwrites every "{tag}" at offs with a hash tag for one random
// slot of the node (7.4 picks a new slot for every batch), padded with '}'.
func (n *clusterNode) writeTag(buf []byte, offs []int, rnd *sharedRandom) {
	slots := *n.slots.Load()
	tag := slotTag(slots[rnd.intn(len(slots))])
	for _, off := range offs {
		p := buf[off+1 : off+4]
		p[0] = tag[0]
		p[1], p[2] = '}', '}'
		if len(tag) >= 2 {
			p[1] = tag[1]
		}
		if len(tag) == 3 {
			p[2] = tag[2]
		}
	}
}

// refreshSlots re-reads the slot map with CLUSTER SLOTS after a MOVED or
// ASK, calling refreshing first. When another client is already
// refreshing, it returns at once.
func (cc *clusterConfig) refreshSlots(ctx context.Context, d *dialer, auth []string, refreshing func()) error {
	if !cc.refreshMu.TryLock() {
		return nil
	}
	defer cc.refreshMu.Unlock()
	refreshing()
	const failed = "Failed to update cluster slots configuration"
	s, err := openSetupConn(ctx, d, cc.nodes[0].ep, auth)
	if err != nil {
		return err
	}
	defer s.shut()
	v, err := s.do("CLUSTER", "SLOTS")
	if err != nil {
		return fmt.Errorf("%s", failed)
	}
	if e, ok := v.(replyError); ok {
		return fmt.Errorf("%s\nCLUSTER SLOTS ERROR: %s", failed, string(e))
	}
	byName := map[string]*clusterNode{}
	for _, n := range cc.nodes {
		byName[n.name] = n
	}
	updated := map[*clusterNode][]int{}
	ranges, _ := v.([]any)
	for _, item := range ranges {
		r, _ := item.([]any)
		if len(r) < 3 {
			continue
		}
		from, _ := r[0].(int64)
		to, _ := r[1].(int64)
		master, _ := r[2].([]any)
		if len(master) < 3 {
			continue
		}
		id, _ := master[2].(string)
		n, ok := byName[id]
		if !ok {
			return fmt.Errorf("%s: could not find node with ID %s in current configuration.", failed, id)
		}
		for s := from; s <= to; s++ {
			updated[n] = append(updated[n], int(s))
		}
	}
	for n, slots := range updated {
		n.slots.Store(&slots)
	}
	return nil
}

// reportNodes is the per-node configuration the report prints.
func (cc *clusterConfig) reportNodes() []*serverConfig {
	out := make([]*serverConfig, len(cc.nodes))
	for i, n := range cc.nodes {
		out[i] = n.config
	}
	return out
}

// keySlot is Redis Cluster's key hash slot: CRC16 (XMODEM) of the key, or of
// the first non-empty {hash tag} in it, modulo 16384.
func keySlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	return int(crc16(key) & (clusterSlots - 1))
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0), as Redis uses.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

var (
	slotTagsOnce sync.Once
	slotTags     [clusterSlots]string
)

// slotTag is a shortest alphanumeric string that hashes to slot. The C tool
// ships such a table; we compute ours once, searching strings of one to
// three characters from [0-9A-Za-z] in that order.
func slotTag(slot int) string {
	slotTagsOnce.Do(func() {
		const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		left := clusterSlots
		try := func(s string) {
			slot := keySlot(s)
			if slotTags[slot] == "" {
				slotTags[slot] = s
				left--
			}
		}
		for _, a := range alphabet {
			try(string(a))
		}
		for _, a := range alphabet {
			for _, b := range alphabet {
				try(string(a) + string(b))
			}
		}
		for _, a := range alphabet {
			for _, b := range alphabet {
				for _, c := range alphabet {
					if left == 0 {
						return
					}
					try(string(a) + string(b) + string(c))
				}
			}
		}
	})
	return slotTags[slot]
}
