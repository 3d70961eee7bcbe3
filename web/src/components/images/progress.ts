// Progress of a pull or push job from its events: the engine's per-layer lines
// ({id, status, progressDetail: {current, total}}) folded into a state per
// layer and one overall fraction; the job's other lines (tagging, scanning,
// the final result) kept beside them.
import type { ScanResult } from '../../lib/api-images';

export type LayerPhase = 'waiting' | 'downloading' | 'downloaded' | 'extracting' | 'pushing' | 'done';

export interface Layer {
  id: string;
  /** The engine's last word on the layer ("Downloading", "Pull complete", …). */
  status: string;
  phase: LayerPhase;
  current: number;
  total: number;
  /** Transfer size when known (the download's or the push's total). */
  size: number;
  /** 0..1 of the layer's whole work. */
  fraction: number;
}

export interface ScanStep {
  status: string;
  stage?: string;
  message?: string;
  progress?: number;
  results?: ScanResult[];
}

export interface TransferState {
  layers: Layer[];
  /** Lines that are not about a layer ("Pulling from …", "Digest: …", tagging, pushing). */
  messages: string[];
  /** The scan after a pull, when one ran. */
  scan: ScanStep | null;
  phase: 'running' | 'complete' | 'error';
  error: string | null;
  /** The final message (push: "Pushed …"). */
  message: string | null;
  targetTag: string | null;
}

export function newTransfer(): TransferState {
  return { layers: [], messages: [], scan: null, phase: 'running', error: null, message: null, targetTag: null };
}

export interface TransferEvent {
  id?: string;
  status?: string;
  message?: string;
  error?: string;
  progressDetail?: { current?: number; total?: number } | null;
  stage?: string;
  progress?: number | string;
  results?: ScanResult[];
  targetTag?: string;
}

// Share of a pulled layer's work that is the download (the rest: extraction).
const DOWNLOAD_SHARE = 0.8;

/** The phase and fraction a layer status means, or null when the status is not a layer's. */
function layerPhase(status: string, current: number, total: number, prev?: Layer): { phase: LayerPhase; fraction: number } | null {
  const s = status.toLowerCase();
  const ratio = total > 0 ? Math.min(1, Math.max(0, current / total)) : 0;
  const keep = prev?.fraction ?? 0;
  if (s === 'pulling fs layer' || s === 'waiting' || s === 'preparing') return { phase: 'waiting', fraction: keep };
  if (s === 'downloading') return { phase: 'downloading', fraction: Math.max(keep, DOWNLOAD_SHARE * ratio) };
  if (s === 'verifying checksum' || s === 'download complete') return { phase: 'downloaded', fraction: Math.max(keep, DOWNLOAD_SHARE) };
  if (s === 'extracting') return { phase: 'extracting', fraction: Math.max(keep, DOWNLOAD_SHARE + (1 - DOWNLOAD_SHARE) * ratio) };
  if (s === 'pushing') return { phase: 'pushing', fraction: Math.max(keep, ratio) };
  if (s === 'pull complete' || s === 'already exists' || s === 'pushed' || s === 'layer already exists' || s.startsWith('mounted from')) {
    return { phase: 'done', fraction: 1 };
  }
  if (s.startsWith('retrying')) return { phase: prev?.phase ?? 'waiting', fraction: keep };
  return null;
}

/** Folds one event of a pull or push job into the state (a new state; the old one is not changed). */
export function applyTransferEvent(state: TransferState, name: string, data: TransferEvent | undefined): TransferState {
  if (!data || typeof data !== 'object') return state;
  const status = typeof data.status === 'string' ? data.status : '';
  const final = name === 'result' || status === 'complete' || status === 'error';
  if (final && status === 'error') {
    return { ...state, phase: 'error', error: data.error || data.message || 'The operation failed' };
  }
  if (final && status === 'complete') {
    return {
      ...state,
      phase: 'complete',
      layers: state.layers.map((l) => ({ ...l, fraction: 1, phase: 'done' as const })),
      message: data.message ?? state.message,
      targetTag: data.targetTag ?? state.targetTag,
    };
  }
  if (status === 'scanning' || status === 'scan-progress' || status === 'scan-complete') {
    const p = typeof data.progress === 'number' ? data.progress : status === 'scan-complete' ? 100 : state.scan?.progress;
    return {
      ...state,
      scan: { status, stage: data.stage, message: data.message, progress: p, results: data.results ?? state.scan?.results },
    };
  }
  const id = typeof data.id === 'string' ? data.id : '';
  const current = Number(data.progressDetail?.current) || 0;
  const total = Number(data.progressDetail?.total) || 0;
  const idx = id ? state.layers.findIndex((l) => l.id === id) : -1;
  const prev = idx >= 0 ? state.layers[idx] : undefined;
  const lp = id ? layerPhase(status, current, total, prev) : null;
  if (!lp) {
    const text = data.message || status;
    if (!text || state.messages[state.messages.length - 1] === text) return state;
    return { ...state, messages: [...state.messages, text] };
  }
  const sizeFrom = lp.phase === 'downloading' || lp.phase === 'pushing' ? total : 0;
  const layer: Layer = {
    id,
    status,
    phase: lp.phase,
    current: lp.phase === 'done' ? prev?.size || total || current : current,
    total,
    size: sizeFrom || prev?.size || (lp.phase === 'extracting' ? total : 0),
    fraction: lp.fraction,
  };
  const layers = [...state.layers];
  if (idx >= 0) layers[idx] = layer;
  else layers.push(layer);
  return { ...state, layers };
}

/**
 * The overall fraction (0..1) of the layers: each layer weighs its size, a
 * layer whose size is not known yet weighs the mean of the known ones.
 */
export function overallFraction(state: TransferState): number {
  if (state.phase === 'complete') return 1;
  const layers = state.layers;
  if (!layers.length) return 0;
  const known = layers.filter((l) => l.size > 0);
  const mean = known.length ? known.reduce((n, l) => n + l.size, 0) / known.length : 1;
  let done = 0;
  let all = 0;
  for (const l of layers) {
    const w = l.size > 0 ? l.size : mean;
    done += w * l.fraction;
    all += w;
  }
  return all > 0 ? Math.min(1, done / all) : 0;
}

/** Bytes transferred and to transfer over the layers whose size is known. */
export function transferredBytes(state: TransferState): { done: number; total: number } {
  let done = 0;
  let total = 0;
  for (const l of state.layers) {
    if (l.size <= 0) continue;
    total += l.size;
    if (l.phase === 'downloading' || l.phase === 'pushing') done += Math.min(l.current, l.size);
    else if (l.phase !== 'waiting') done += l.size;
  }
  return { done, total };
}

/** Words for a layer's state shown next to its bar. */
export function layerLabel(l: Layer): string {
  return l.status || l.phase;
}
