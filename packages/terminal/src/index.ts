/** @since 0.1.0 */
export * as Keys from "./Keys.js"

/** @since 0.1.0 */
export * as LineLog from "./LineLog.js"

/** @since 0.1.0 */
export * as Paging from "./Paging.js"

/** @since 0.1.0 */
export * as Paste from "./Paste.js"

/** @since 0.1.0 */
export * as Utf8 from "./Utf8.js"

/** @since 0.1.0 */
export * as Emulator from "./Emulator.js"

/** @since 0.1.0 */
export * as ShellMarkers from "./ShellMarkers.js"

/** @since 0.1.0 */
export * as Capture from "./Capture.js"

/** @since 0.3.0 */
export * as Matcher from "./Matcher.js"

/** @since 0.3.0 */
export * as OutputWatch from "./OutputWatch.js"

/** @since 0.3.0 */
export * as SafeReplay from "./SafeReplay.js"
