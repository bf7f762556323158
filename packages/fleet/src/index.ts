/**
 * @since 0.3.0
 */
export * as FleetErrors from "./FleetErrors.js"
/**
 * @since 0.3.0
 */
export * as Nats from "./Nats.js"
/**
 * @since 0.3.0
 */
export * as Subjects from "./Subjects.js"
/**
 * @since 0.3.0
 */
export * as TestFleet from "./TestFleet.js"
export * as TestOperator from "./TestOperator.js"
/**
 * @since 0.3.0
 */
export * as NatsRpcClient from "./NatsRpcClient.js"
/**
 * @since 0.3.0
 */
export * as NatsRpcServer from "./NatsRpcServer.js"
/**
 * @since 0.3.0
 */
export * as Discovery from "./Discovery.js"
/**
 * @since 0.3.0
 */
export * as FleetRegistry from "./FleetRegistry.js"
/**
 * @since 0.3.0
 */
export * as Placement from "./Placement.js"
/**
 * @since 0.3.0
 */
export * as FleetIds from "./FleetIds.js"
/**
 * @since 0.3.0
 */
export * as Machine from "./Machine.js"
/**
 * @since 0.3.0
 */
export * as FleetTerminal from "./FleetTerminal.js"
/**
 * The live view over the fleet: an `Oversight` over every machine.
 *
 * @since 0.4.0
 */
export * as FleetOversight from "./FleetOversight.js"
