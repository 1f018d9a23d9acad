// @pipeloom/core: document, validation, compiler passes, predictor, trace model.
// Pure TypeScript: no DOM, no Node, no clocks, no unseeded randomness.
// This index is core's whole public surface (apps import nothing deeper); test documents are
// in '@pipeloom/core/testing', which may use Node.

export * from './ids.js';
export * from './diagnostics.js';

export * from './document/types.js';
export { parseDocument, MAX_DOCUMENT_BYTES } from './document/parse.js';
export { validate, analyze } from './document/validate.js';
export { normalize, DOCUMENT_DEFAULTS } from './document/normalize.js';
export { migrate, CURRENT_FORMAT } from './document/migrate.js';
export { documentJsonSchema, MAX_DELAY, type JsonSchemaOptions } from './document/schema.js';
export type { Model, ModelNode, ModelEdges, EdgeLists, ModelPe } from './document/model.js';
// Scan macro-nodes: the networks, the plan the expansion writes, its model (the inspector's numbers).
export { buildNetwork, networkStats, resolveNetwork, NETWORKS, NETWORK_ALIASES, IDENTITY, type Network, type NetworkStats, type ScanNetwork, type Application, type NetworkValue } from './scan/networks.js';
export { scanPlan, scanBarriers, blocks as scanBlocks, operatorApplications, SCAN_STRATEGIES, SCAN_OUTPUTS, SCAN_EXECUTIONS, type ScanPlan, type PlanNode, type BarrierNode as ScanBarrierNode, type ScanStrategy, type ScanOutput, type ScanExecution, type OperatorMode } from './scan/plan.js';
export { scanModel, speedupCurve, networkModel, type ScanModel, type SpeedupPoint, type WorkerModel, type StageCounts } from './scan/model.js';
export { simulateScan, MAX_SIMULATED_NODES, type ScanSimulation, type ScanCosts, type MeanCosts, type ReplayCosts, type SimulateOptions as ScanSimulateOptions, type ScanLinkCost, type WorkerTime } from './scan/simulate.js';
export { SCAN_PARAMS, MAX_SCAN_WORKERS, MAX_SCAN_ELEMENTS, type BinarySpec } from './document/scan.js';

export * from './compile/types.js';
export { compile, compileModel, type CompileOptions } from './compile/compile.js';
export { bufferNode, bufferNodes, colorGroups, bufferIndex, bufferPe, peProgram, allPrograms, hostPrograms, programHosts, programIndex, programBytes, lastStartCycle, actionRange, ActionCache } from './compile/decode.js';
export type { ColorGroup } from './compile/decode.js';
export { Router, linkTime, type Route } from './compile/route.js';

export * from './trace/event.js';

export { formatBytes, formatSeconds } from './util/units.js';
export { mulberry32, randomInt } from './util/random.js';

export { simulate, type SimulationResult, type SimulateOptions } from './compile/simulate.js';
export * from './run/contract.js';
export { predict, predictModel, predictStrategy, SCAN_LANE, type Prediction, type PredictOptions, type PredictResult, type StrategyPrediction, type PhaseTime } from './predict/predict.js';
export { nodeTime, transferTime, DEFAULT_RATES, type TimingOptions } from './predict/timing.js';
export { toChromeTrace, traceMetadata, type ChromeTrace, type ChromeEvent, type TraceMetadata } from './trace/chrome.js';
export { readChromeTrace, TRACE_FILE_LIMITS, type ReadTraceResult, type TraceFileLimits } from './trace/chrome-read.js';
export { toPajeTrace } from './trace/paje.js';
export { toTraceCsv, TRACE_CSV_COLUMNS } from './trace/csv.js';
export { analyseTrace, measuredTimes, TraceAccumulator, type Trace, type AnalysisOptions, type TraceAnalysis, type LaneAnalysis } from './run/analysis.js';
export { sendLane, recvLane, isTransferLane, laneLabel, laneName, transferLanes, graphLanes, compareLanes, type TraceLaneKey } from './trace/lanes.js';
export { TraceColumns, TRACE_KINDS, TRACE_COUNTER, type Lane as TraceLane } from './trace/columns.js';
export { CALIBRATION_FORMAT, calibrationFrom, calibratedTiming, calibrationPath, deviceTimes, documentHash, parseCalibration, predictCalibrated, standInTimes, type Calibration, type CalibratedFiring, type CalibratedTiming, type CalibratedTransfer, type MeasuredTimes } from './run/calibration.js';

// The run: the coordinator, the agent protocol and the deploy checks agents apply.
export * from './run/protocol.js';
export * from './run/coordinator.js';
export { DEPLOY_SILENCE_MS, stepsText, type DeployOptions, type DeployProgress } from './run/deploy-watch.js';
export { checkDeploy, DEPLOY_SHAPE_LIMITS, quote, type Deploy, type DeployShapeLimits } from './run/deploy-check.js';
export { parseRequires, failingClause, reported, boundedCapabilities, WEBGPU_FEATURES, WEBGPU_LIMITS, type Clause, type Op, type PeCapabilities } from './run/requires.js';
export { taskBagPolicy, simulateBag, oldestFirst, type BagTask, type Policy, type PolicyState, type PoolPe, type Assignment, type Placed } from './run/policy.js';
export { successorLists } from './util/csr.js';
export { checkAgentKernels, kernelVersions, type AgentKernels } from './kernels.js';
export { kernelIds, kernelNodes } from './document/walk.js';
export { lowerDocument, type LowerOptions, type Lowered } from './document/lower.js';
// Parameters and composites: the expression language, the designer's parameter panel, and the
// flattened graph (ids `seg/open`, each node's and edge's path as written).
export { evaluateExpression, parseExpression, MAX_EXPRESSION_LENGTH, MAX_EXPRESSION_DEPTH, type ExprScope, type ExprError } from './document/expr.js';
export { paramTable, overrideParams, type ParamRow } from './document/params.js';
export { flattenComposites, flattenDocument, MAX_COMPOSITE_DEPTH, MAX_FLAT_NODES, type Flattened as FlattenedDocument } from './document/flatten.js';
export { bagGraph, outputKey, taskId, type BagGraph, type BagGraphNode, type BagPart } from './run/taskbag/graph.js';
export { TaskBag, type BagCommand, type BagCounts, type BagOptions, type BagPe } from './run/taskbag/bag.js';
