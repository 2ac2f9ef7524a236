// RUN: not irgl-opt %s 2>&1 | filecheck %s

// #irgl_dist.host: node-array positions are distinct.
irgl.kernel host @main(%a: memref<?xi32>) attributes {irgl_dist.host = #irgl_dist.host<oec, nodes = [0, 0]>} {
}
// CHECK: #irgl_dist.host: node-array positions must be distinct and non-negative, got [0, 0]
