// @pipeloom/core: document, validation, compiler passes, predictor, trace model.
// Pure TypeScript: no DOM, no Node, no clocks, no unseeded randomness.
// This index is core's whole public surface (apps import nothing deeper): what the agent, the
// web app and the scripts use, each name as it is defined (index.test.ts keeps it so). Tests and
// benches outside core reach other parts through '@pipeloom/core/internal'; test documents are
// in '@pipeloom/core/testing', which may use Node. Neither is published.

export { peId, type Brand, type PeId, type HostId, type BufferId, type NodeId } from './ids.js';
export { formatDiagnostic, type Diagnostic } from './diagnostics.js';

export {
  FORMAT,
  type Expr,
  type ParamDef,
  type DocumentParams,
  type TokenRange,
  type CompositeDef,
  type PortRef,
  type AppNode,
  type AppEdge,
  type PeKind,
  type LinkKind,
  type Host,
  type ProcessingElement,
  type Link,
  type ArchitectureGraph,
  type WrittenDocument,
  type DocumentOptions,
  type MappingTarget,
  type ProjectDocument,
} from './document/types.js';
export { parseDocument, MAX_DOCUMENT_BYTES } from './document/parse.js';
export { validate, analyze } from './document/validate.js';
export { normalize, DOCUMENT_DEFAULTS } from './document/normalize.js';
export type { Model } from './document/model.js';
// Scan macro-nodes: the networks, the plan the expansion writes, its model (the inspector's numbers).
export { resolveNetwork, NETWORKS, NETWORK_ALIASES, IDENTITY, type ScanNetwork } from './scan/networks.js';
export {
  scanPlan,
  operatorApplications,
  SCAN_STRATEGIES,
  SCAN_OUTPUTS,
  SCAN_EXECUTIONS,
  type ScanPlan,
  type ScanStrategy,
  type ScanOutput,
  type ScanExecution,
  type OperatorMode,
} from './scan/plan.js';
export { scanModel, speedupCurve } from './scan/model.js';
export { simulateScan, type ScanCosts, type ScanLinkCost } from './predict/scan-simulate.js';
export { SCAN_PARAMS, MAX_SCAN_WORKERS, MAX_SCAN_ELEMENTS } from './document/scan.js';

export type { BufferNode, BufferAccess, MemoryReport, Action, PeProgram, InitialFill, ImplementationGraph } from './compile/types.js';
export { compile, compileModel } from './compile/compile.js';
export { bufferNode, bufferNodes, colorGroups, bufferIndex, allPrograms, programHosts, type ColorGroup } from './compile/decode.js';
export { Router } from './compile/route.js';

export { taskSlice, barrierSlice, waitSlice, type TraceKind, type TraceEvent } from './trace/event.js';

export { formatBytes, formatSeconds } from './util/units.js';

export { SYNC_MODES, type SyncMode, type ExecutionMode } from './document/types.js';
export { slotOf, threshold, type Access, type ActionPlan } from './compile/contract.js';
export { predict, type Prediction, type PhaseTime, type PredictOptions, type PredictResult, type StrategyPrediction } from './predict/predict.js';
export { nodeTime, DEFAULT_RATES } from './predict/timing.js';
export { toChromeTrace, traceMetadata, type ChromeTrace, type ChromeEvent, type TraceMetadata } from './trace/chrome.js';
export { readChromeTrace, TRACE_FILE_LIMITS } from './trace/chrome-read.js';
export { toPajeTrace } from './trace/paje.js';
export { toTraceCsv } from './trace/csv.js';
export { analyseTrace, measuredTimes, TraceAccumulator } from './run/analysis.js';
export { sendLane, recvLane, isMemoryLane, graphPes } from './trace/lanes.js';
export { TraceColumns, TRACE_KINDS, TRACE_COUNTER } from './trace/columns.js';
export {
  calibrationFrom,
  calibratedTiming,
  calibrationPath,
  deviceTimes,
  parseCalibration,
  predictCalibrated,
  standInTimes,
  type Calibration,
  type MeasuredTimes,
} from './run/calibration.js';

// The run: the coordinator, the agent protocol and the deploy checks agents apply.
export {
  PROTOCOL_VERSION,
  CLOSE,
  MAX_DEPLOY_STEPS,
  parseMessage,
  transferKey,
  type PeReport,
  type MachineIdentity,
  type FailureReport,
  type ToAgent,
  type BagDeploy,
  type BagInput,
  type BagTaskMessage,
  type DeployStep,
  type DeployStepReport,
  type FromAgent,
  type PeerMessage,
  type SinkWrite,
} from './run/protocol.js';
export {
  Coordinator,
  ConnectError,
  type SocketLike,
  type AgentInfo,
  type Progress,
  type RunOptions,
  type RunResult,
  type BagRunOptions,
  type RunHandle,
} from './run/coordinator.js';
export { stepsText, type DeployOptions, type DeployProgress } from './run/deploy-watch.js';
export { checkDeploy, DEPLOY_SHAPE_LIMITS, quote, type DeployShapeLimits } from './run/deploy-check.js';
export { samePe, servedPe } from './run/pe-alias.js';
export { parseRequires, failingClause, reported, WEBGPU_FEATURES, type Clause, type PeCapabilities } from './document/requires.js';
export { successorLists } from './util/csr.js';
export { checkAgentKernels, kernelVersions } from './kernels.js';
export { kernelIds } from './document/walk.js';
export { lowerDocument } from './document/lower.js';
export type { Lowered } from './document/stage.js';
// Parameters and composites: the expression language, the designer's parameter panel, and the
// flattened graph (ids `seg/open`, each node's and edge's path as written).
export { evaluateExpression, parseExpression } from './document/expr.js';
export { paramTable, overrideParams, type ParamRow } from './document/params.js';
export { flattenDocument } from './document/flatten.js';
export { bagGraph, type BagGraph } from './run/taskbag/graph.js';
export type { BagCounts } from './run/taskbag/bag.js';
