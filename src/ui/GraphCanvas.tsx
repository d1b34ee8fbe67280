import { useMemo } from 'preact/hooks'
import type { GraphNode } from '../image/imageGraph.js'
import { bytes, short } from './format.js'
import { NODE_HEIGHT, NODE_WIDTH, layoutPage } from './graphLayout.js'

/** A page up to this wide is scaled down to the pane; a wider one keeps its size and scrolls, so its text stays readable. */
const FIT_WIDTH = 1600

const path = (points: Array<{ x: number; y: number }>) => points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ')

/** One page of the image graph as SVG: a box per image (message, refs, layers and sizes), an arrow from each parent. */
export function GraphCanvas({ nodes, selected, onSelect }: { nodes: GraphNode[]; selected: string | null; onSelect: (id: string) => void }) {
  const layout = useMemo(() => layoutPage(nodes), [nodes])
  return (
    <div class="graph-scroll">
      <svg
        class={layout.width <= FIT_WIDTH ? 'fit' : ''}
        width={layout.width}
        height={layout.height}
        viewBox={`0 0 ${layout.width} ${layout.height}`}
        role="img"
        aria-label="image graph"
        data-testid="graph"
      >
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" class="arrowhead" />
          </marker>
        </defs>
        {layout.edges.map((e) => (
          <path key={`${e.from}-${e.to}`} d={path(e.points)} class={e.merge ? 'edge merge' : 'edge'} marker-end="url(#arrow)" />
        ))}
        {layout.nodes.map(({ node, x, y }) => (
          <NodeBox
            key={node.id}
            node={node}
            x={x - NODE_WIDTH / 2}
            y={y - NODE_HEIGHT / 2}
            selected={node.id === selected}
            continued={layout.continued.has(node.id)}
            onSelect={onSelect}
          />
        ))}
      </svg>
    </div>
  )
}

function NodeBox({ node, x, y, selected, continued, onSelect }: { node: GraphNode; x: number; y: number; selected: boolean; continued: boolean; onSelect: (id: string) => void }) {
  const kind = node.parents.length > 1 ? 'merge' : node.fork ? 'fork' : node.parents.length === 0 ? 'root' : 'image'
  const labels = [...node.refs, ...(node.fork ? [`fork #${node.fork.index}`] : []), ...node.live.map((name) => `live: ${name}`)]
  const layers = node.layers.map((l) => (l.layer === 'world' ? `${l.files ?? 0} files ${bytes(l.bytes)}` : `${l.layer} ${bytes(l.bytes)}`)).join(' · ')
  return (
    <g class={`node ${kind}${selected ? ' selected' : ''}`} transform={`translate(${x},${y})`} onClick={() => onSelect(node.id)} data-id={node.id} data-kind={kind} tabIndex={0}>
      <title>{`${node.id}\n${node.message}\n${node.createdAt}\n${layers}`}</title>
      <rect width={NODE_WIDTH} height={NODE_HEIGHT} rx="6" />
      <text x="8" y="16" class="id">
        {short(node.id)}
        <tspan class="refs">{labels.length ? `  ${labels.join(', ')}` : ''}</tspan>
      </text>
      <text x="8" y="33" class="message">
        {clip(node.message, 40)}
      </text>
      <text x="8" y="49" class="layers">
        {clip(layers, 50)}
      </text>
      {continued && <line x1={NODE_WIDTH / 2} y1={NODE_HEIGHT} x2={NODE_WIDTH / 2} y2={NODE_HEIGHT + 14} class="edge stub" />}
    </g>
  )
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)
