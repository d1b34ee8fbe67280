import dagre, { type EdgeLabel, type GraphLabel, type NodeLabel } from '@dagrejs/dagre'
import type { GraphNode } from '../image/imageGraph.js'

export const NODE_WIDTH = 260
export const NODE_HEIGHT = 58

export interface PlacedNode {
  node: GraphNode
  x: number
  y: number
}

export interface PlacedEdge {
  from: string
  to: string
  points: Array<{ x: number; y: number }>
  /** A merge's second (or later) parent. */
  merge: boolean
}

export interface Layout {
  width: number
  height: number
  nodes: PlacedNode[]
  edges: PlacedEdge[]
  /** Nodes of the page whose parents lie on a later page (drawn with a stub). */
  continued: Set<string>
}

/**
 * Lay out one page of the image graph with dagre: parents below their children, the
 * newest at the top. Only the page is laid out (dagre's cost grows faster than the graph),
 * and edges to parents on other pages become stubs.
 */
export function layoutPage(nodes: GraphNode[]): Layout {
  const g = new dagre.graphlib.Graph<GraphLabel, NodeLabel, EdgeLabel>()
  g.setGraph({ rankdir: 'BT', nodesep: 24, ranksep: 36, marginx: 16, marginy: 16 })
  g.setDefaultEdgeLabel(() => ({}))
  const onPage = new Set(nodes.map((n) => n.id))
  for (const n of nodes) g.setNode(n.id, { width: NODE_WIDTH, height: NODE_HEIGHT })
  const continued = new Set<string>()
  for (const n of nodes) {
    for (const p of n.parents) {
      if (onPage.has(p)) g.setEdge(p, n.id)
      else continued.add(n.id)
    }
  }
  dagre.layout(g)
  const byId = new Map<string, GraphNode>(nodes.map((n) => [n.id, n]))
  const graph = g.graph()
  return {
    width: graph.width ?? 0,
    height: graph.height ?? 0,
    nodes: g.nodes().map((id) => ({ node: byId.get(id)!, x: g.node(id).x ?? 0, y: g.node(id).y ?? 0 })),
    edges: g.edges().map((e) => ({ from: e.v, to: e.w, points: g.edge(e).points ?? [], merge: (byId.get(e.w)!.parents as string[]).indexOf(e.v) > 0 })),
    continued,
  }
}
