package inventory

import (
	"fmt"
	"net/netip"
	"sort"

	"github.com/poolsolve/poolsolve/lloom"
)

// FabricRange is the NVIDIA Sync fabric range: LLooM's discovery only
// considers 10.100.* addresses.
var FabricRange = netip.MustParsePrefix("10.100.0.0/16")

// FabricPeer is another node's fabric address as the cluster config
// knows it (cluster.nodes[N].fabricAddress, or a 10.100.* backendHost).
type FabricPeer struct {
	NodeID  string
	Address string
}

// fabricLinks joins what the config says with what the interfaces show,
// the way LLooM's NVIDIA Sync discovery does:
//
//   - every configured link is kept; one whose local address is not on any
//     interface gets a note, since the cable may be gone;
//   - a configured peer address that sits in the subnet of exactly one local
//     fabric interface becomes a link through that interface; more than one
//     is ambiguous and only noted;
//   - links are deduplicated by peer address, first one wins;
//   - a fabric interface that leads to no known peer is noted.
//
// Links come back sorted by peer node, then interface, then peer address.
func fabricLinks(self string, configured []Link, peers []FabricPeer, addrs []InterfaceAddr) ([]Link, []string) {
	var local []InterfaceAddr
	for _, a := range addrs {
		if a.Prefix.Addr().Is4() && FabricRange.Contains(a.Prefix.Addr()) {
			local = append(local, a)
		}
	}
	sort.Slice(local, func(i, j int) bool {
		if local[i].Interface != local[j].Interface {
			return local[i].Interface < local[j].Interface
		}
		return local[i].Prefix.Addr().Less(local[j].Prefix.Addr())
	})
	isLocal := func(s string) bool {
		for _, a := range local {
			if a.Prefix.Addr().String() == s {
				return true
			}
		}
		return false
	}

	var links []Link
	var notes []string
	seenPeer := map[string]bool{}
	used := map[string]bool{} // local interfaces that lead somewhere
	for _, l := range configured {
		if l.PeerNodeID == "" || l.PeerNodeID == self {
			continue
		}
		if l.PeerAddress != "" {
			if seenPeer[l.PeerAddress] {
				continue
			}
			seenPeer[l.PeerAddress] = true
		}
		if l.LocalAddress != "" && !isLocal(l.LocalAddress) {
			notes = append(notes, fmt.Sprintf("configured link to %s: local address %s is not on any interface", l.PeerNodeID, l.LocalAddress))
		}
		used[l.LocalInterface] = true
		links = append(links, l)
	}
	for _, p := range peers {
		if p.NodeID == "" || p.NodeID == self {
			continue
		}
		addr, err := netip.ParseAddr(p.Address)
		if err != nil || !addr.Is4() || !FabricRange.Contains(addr) || seenPeer[addr.String()] || isLocal(addr.String()) {
			continue
		}
		var match []InterfaceAddr
		for _, a := range local {
			if a.Prefix.Masked().Contains(addr) {
				match = append(match, a)
			}
		}
		switch len(match) {
		case 0:
			continue
		case 1:
			m := match[0]
			seenPeer[addr.String()] = true
			used[m.Interface] = true
			links = append(links, Link{
				PeerNodeID:     p.NodeID,
				LocalInterface: m.Interface,
				LocalAddress:   m.Prefix.Addr().String(),
				PeerAddress:    addr.String(),
				Prefixlen:      m.Prefix.Bits(),
			})
		default:
			notes = append(notes, fmt.Sprintf("fabric peer %s at %s matches %d local interfaces; not linked (ambiguous-local-interface)", p.NodeID, addr, len(match)))
		}
	}
	for _, a := range local {
		if !used[a.Interface] {
			notes = append(notes, fmt.Sprintf("fabric interface %s %s leads to no configured peer", a.Interface, a.Prefix))
		}
	}
	sort.SliceStable(links, func(i, j int) bool {
		a, b := links[i], links[j]
		if a.PeerNodeID != b.PeerNodeID {
			return a.PeerNodeID < b.PeerNodeID
		}
		if a.LocalInterface != b.LocalInterface {
			return a.LocalInterface < b.LocalInterface
		}
		return a.PeerAddress < b.PeerAddress
	})
	return links, notes
}

// FabricFromCluster gives the inventory options for node self's fabric
// links: the discovery links observed from self, and every other node's
// fabric address (fabricAddress, else backendHost) as a candidate peer.
func FabricFromCluster(c *lloom.Cluster, self string) ([]Link, []FabricPeer) {
	var links []Link
	if c.Discovery != nil {
		for _, l := range c.Discovery.Links {
			if l.NodeID != "" && l.NodeID != self {
				continue
			}
			il := Link{PeerNodeID: l.PeerNodeID, LocalInterface: l.LocalInterface, LocalAddress: l.LocalAddress, PeerAddress: l.PeerAddress}
			if l.Prefixlen != nil {
				il.Prefixlen = *l.Prefixlen
			}
			links = append(links, il)
		}
	}
	ids := make([]string, 0, len(c.Nodes))
	for id := range c.Nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var peers []FabricPeer
	for _, id := range ids {
		n := c.Nodes[id]
		if id == self {
			continue
		}
		for _, a := range []string{n.FabricAddress, n.BackendHost} {
			if a != "" {
				peers = append(peers, FabricPeer{NodeID: id, Address: a})
			}
		}
	}
	return links, peers
}
