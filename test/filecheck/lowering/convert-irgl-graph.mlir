// RUN: irgl-opt %s -p convert-irgl-kernels,convert-irgl-graph | filecheck %s

// Graph accessors become runtime calls; !irgl.graph becomes the runtime
// handle in signatures, arguments and declarations.
irgl.kernel device @f(%g: !irgl.graph, %n: index, %e: index) -> i32 {
  %a = irgl.graph.num_nodes %g
  %b = irgl.graph.num_edges %g
  %m = irgl.graph.max_degree %g
  %c = irgl.graph.first_edge %g[%n]
  %d = irgl.graph.last_edge %g[%n]
  %deg = irgl.graph.degree %g[%n]
  %dst = irgl.graph.edge_dst %g[%e]
  %w = irgl.graph.edge_weight %g[%e] : i32
  irgl.return %w : i32
}

// CHECK:      func.func @f(%g: !irgl_rt.graph, %n: index, %e: index) -> i32 {
// CHECK-NEXT:   %a = func.call @irgl_graph_num_nodes(%g) : (!irgl_rt.graph) -> index
// CHECK-NEXT:   %b = func.call @irgl_graph_num_edges(%g) : (!irgl_rt.graph) -> index
// CHECK-NEXT:   %m = func.call @irgl_graph_max_degree(%g) : (!irgl_rt.graph) -> index
// CHECK-NEXT:   %c = func.call @irgl_graph_first_edge(%g, %n) : (!irgl_rt.graph, index) -> index
// CHECK-NEXT:   %d = func.call @irgl_graph_last_edge(%g, %n) : (!irgl_rt.graph, index) -> index
// CHECK-NEXT:   %deg = func.call @irgl_graph_degree(%g, %n) : (!irgl_rt.graph, index) -> index
// CHECK-NEXT:   %dst = func.call @irgl_graph_edge_dst(%g, %e) : (!irgl_rt.graph, index) -> index
// CHECK-NEXT:   %w = func.call @irgl_graph_edge_weight(%g, %e) : (!irgl_rt.graph, index) -> i32
// CHECK-NEXT:   func.return %w : i32
// CHECK:      func.func private @irgl_graph_num_nodes(!irgl_rt.graph) -> index
// CHECK-NOT:  !irgl.graph
