// RUN: irgl-opt %s -p "irgl-distribute{policy=cvc}" | filecheck %s --check-prefix=CVC
// RUN: irgl-opt %s -p "irgl-distribute{policy=cvc}" --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: irgl-opt %s -p irgl-distribute | filecheck %s --check-prefix=OEC

// A node's degree read only to decide whether it is pushed (SSSP's source:
// pushed only if it has edges). Under an edge-cut a rank holds all of its
// masters' edges and the test stays; under a vertex-cut (cvc) a rank's
// degree is only its share of the node's edges, so the node is pushed
// whatever its degree (the test becomes `true`, the degree read goes).
irgl.kernel @init(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  %zero = arith.constant 0 : i32
  %inf = arith.constant 1073741823 : i32
  %c0 = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    %is_src = arith.cmpi eq, %n, %src : index
    %d = arith.select %is_src, %zero, %inf : i32
    memref.store %d, %dist[%n] : memref<?xi32>
    scf.if %is_src {
      %deg = irgl.graph.degree %g[%n]
      %has_edges = arith.cmpi ne, %deg, %c0 : index
      scf.if %has_edges {
        irgl.wl.push %n
      }
    }
  }
}
irgl.kernel @relax(%g: !irgl.graph, %dist: memref<?xi32>) {
  %one = arith.constant 1 : i32
  irgl.forall %i in worklist {
    %n = irgl.wl.pop %i
    %dn = memref.load %dist[%n] : memref<?xi32>
    %nd = arith.addi %dn, %one : i32
    irgl.forall %e in edges(%g, %n) {
      %t = irgl.graph.edge_dst %g[%e]
      %old = "memref.atomic_rmw"(%nd, %dist, %t) <{kind = 7 : i64}> : (i32, memref<?xi32>, index) -> i32
      %better = arith.cmpi slt, %nd, %old : i32
      scf.if %better {
        irgl.wl.push %t
      }
    }
  }
}
// The zero on the left, and `degree > 0`: the same.
irgl.kernel @either(%g: !irgl.graph, %src: index) {
  %c0 = arith.constant 0 : index
  irgl.forall %n in nodes(%g) {
    %is_src = arith.cmpi eq, %n, %src : index
    scf.if %is_src {
      %deg = irgl.graph.degree %g[%n]
      %any = arith.cmpi ne, %c0, %deg : index
      scf.if %any {
        irgl.wl.push %n
      }
      %deg2 = irgl.graph.degree %g[%n]
      %some = arith.cmpi ugt, %deg2, %c0 : index
      scf.if %some {
        irgl.wl.push %n
      }
    }
  }
}
irgl.kernel host @main(%g: !irgl.graph, %dist: memref<?xi32>, %src: index) {
  irgl.pipe once {
    irgl.invoke @init(%g, %dist, %src) : (!irgl.graph, memref<?xi32>, index)
    irgl.iterate @relax(%g, %dist) : (!irgl.graph, memref<?xi32>) {
    }
  }
}

// CVC-LABEL: irgl.kernel @init(
// CVC-NOT:     irgl.graph.degree
// CVC:         scf.if %is_src {
// CVC-NEXT:      %has_edges = arith.constant true
// CVC-NEXT:      scf.if %has_edges {
// CVC-NEXT:        irgl.wl.push %n
// CVC-LABEL: irgl.kernel @relax(
// CVC-LABEL: irgl.kernel @either(
// CVC-NOT:     irgl.graph.degree
// CVC:         %any = arith.constant true
// CVC-NEXT:    scf.if %any {
// CVC:         %some = arith.constant true
// CVC-NEXT:    scf.if %some {
// CVC-LABEL: irgl.kernel host @main(

// GENERIC:      "scf.if"(%is_src) ({
// GENERIC-NEXT:   %has_edges = "arith.constant"() <{value = true}> : () -> i1
// GENERIC-NEXT:   "scf.if"(%has_edges) ({
// GENERIC-NEXT:     "irgl.wl.push"(%n) : (index) -> ()

// OEC-LABEL: irgl.kernel @init(
// OEC:         %deg = irgl.graph.degree %g[%n]
// OEC-NEXT:    %has_edges = arith.cmpi ne, %deg, %c0 : index
// OEC-NEXT:    scf.if %has_edges {
// OEC-NEXT:      irgl.wl.push %n
