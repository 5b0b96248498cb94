// Package deliverytest holds the fake producer the delivery's sinks and
// the emitter are tested against, without a broker.
//
// Test support only: no product package imports it. It imports no package
// of connector (delivery's own unit tests use it, and delivery may not be
// imported back), only offsets for the records it decodes.
package deliverytest
