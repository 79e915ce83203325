//! Process topologies in `mpi.h` (MPI-3.1 chapter 7): Cartesian (create, coordinates,
//! shift, sub-grids), graph and distributed graph topologies (create and the queries),
//! and MPI_Topo_test. Thin shells over `topo`; never sends a message itself (their
//! neighbourhood collectives are in `collectives`).

use super::fortran::weights_sentinel;
use super::*;
use crate::topo::graph;
use crate::topology;

#[no_mangle]
pub unsafe extern "C" fn MPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    guard("MPI_Dims_create", COMM_WORLD, || {
        // SAFETY: `ndims` dimensions (MPI-3.1 section 7.5.2).
        let d = unsafe { raw::array_mut(dims, cnt(ndims)?, "dims") }?;
        topo::dims_create(nnodes, d)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_create(
    comm: Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    _reorder: c_int,
    comm_cart: *mut c_int,
) -> c_int {
    guard("MPI_Cart_create", comm, || {
        let n = cnt(ndims)?;
        // SAFETY: `ndims` dimensions and periods (MPI-3.1 section 7.5.1).
        let (d, p) = unsafe {
            (
                raw::array(dims, n, "dims")?,
                raw::array(periods, n, "periods")?,
            )
        };
        let periods: Vec<bool> = p.iter().map(|&x| x != 0).collect();
        set(
            comm_cart,
            "comm_cart",
            topo::cart_create(comm, d, &periods)?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Topo_test(comm: Comm, status: *mut c_int) -> c_int {
    guard("MPI_Topo_test", comm, || {
        set(status, "status", topo::topo_test(comm)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cartdim_get(comm: Comm, ndims: *mut c_int) -> c_int {
    guard("MPI_Cartdim_get", comm, || {
        let (cart, _) = topo::cart_of(comm)?;
        set(ndims, "ndims", cart.dims().len() as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_get(
    comm: Comm,
    maxdims: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> c_int {
    guard("MPI_Cart_get", comm, || {
        let (cart, rank) = topo::cart_of(comm)?;
        let n = cart.dims().len().min(cnt(maxdims)?);
        let me = cart.coordinates(rank)?;
        // SAFETY: `maxdims` entries in each array (MPI-3.1 section 7.5.5).
        let (d, p, c) = unsafe {
            (
                raw::array_mut(dims, n, "dims")?,
                raw::array_mut(periods, n, "periods")?,
                raw::array_mut(coords, n, "coords")?,
            )
        };
        for i in 0..n {
            d[i] = cart.dims()[i];
            p[i] = c_int::from(cart.periods()[i]);
            c[i] = me[i];
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_rank(
    comm: Comm,
    coords: *const c_int,
    rank: *mut c_int,
) -> c_int {
    guard("MPI_Cart_rank", comm, || {
        let (cart, _) = topo::cart_of(comm)?;
        // SAFETY: one coordinate per dimension (MPI-3.1 section 7.5.5).
        let c = unsafe { raw::array(coords, cart.dims().len(), "coords") }?;
        set(rank, "rank", topo::cart_rank(&cart, c)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_coords(
    comm: Comm,
    rank: c_int,
    maxdims: c_int,
    coords: *mut c_int,
) -> c_int {
    guard("MPI_Cart_coords", comm, || {
        let (cart, _) = topo::cart_of(comm)?;
        let me = cart.coordinates(rank)?;
        let n = me.len().min(cnt(maxdims)?);
        // SAFETY: `maxdims` coordinates (MPI-3.1 section 7.5.5).
        let c = unsafe { raw::array_mut(coords, n, "coords") }?;
        c.copy_from_slice(&me[..n]);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_shift(
    comm: Comm,
    direction: c_int,
    disp: c_int,
    source: *mut c_int,
    dest: *mut c_int,
) -> c_int {
    guard("MPI_Cart_shift", comm, || {
        let (cart, rank) = topo::cart_of(comm)?;
        let (s, d) = topology::cart_shift(&cart, rank, direction, disp)?;
        set(source, "rank_source", s)?;
        set(dest, "rank_dest", d)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_sub(
    comm: Comm,
    remain_dims: *const c_int,
    newcomm: *mut c_int,
) -> c_int {
    guard("MPI_Cart_sub", comm, || {
        let (cart, _) = topo::cart_of(comm)?;
        // SAFETY: one flag per dimension (MPI-3.1 section 7.5.7).
        let r = unsafe { raw::array(remain_dims, cart.dims().len(), "remain_dims") }?;
        let remain: Vec<bool> = r.iter().map(|&x| x != 0).collect();
        set(newcomm, "newcomm", topo::cart_sub(comm, &remain)?)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Cart_map(
    comm: Comm,
    ndims: c_int,
    dims: *const c_int,
    _periods: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    guard("MPI_Cart_map", comm, || {
        // SAFETY: `ndims` dimensions (MPI-3.1 section 7.5.8).
        let d = unsafe { raw::array(dims, cnt(ndims)?, "dims") }?;
        let n: c_int = d.iter().product();
        let rank = comm::rank(comm)?;
        set(newrank, "newrank", if rank < n { rank } else { UNDEFINED })
    })
}

// ---- Graph topologies (MPI-3.1 section 7.5.3) ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_create(
    comm: Comm,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    _reorder: c_int,
    comm_graph: *mut c_int,
) -> c_int {
    guard("MPI_Graph_create", comm, || {
        let n = cnt(nnodes)?;
        // SAFETY: `nnodes` cumulative degrees (MPI-3.1 section 7.5.3).
        let index = unsafe { raw::array(index, n, "index") }?;
        let m = index.last().map_or(Ok(0), |&e| cnt(e))?;
        // SAFETY: `index[nnodes - 1]` edges.
        let edges = unsafe { raw::array(edges, m, "edges") }?;
        set(
            comm_graph,
            "comm_graph",
            graph::graph_create(comm, index, edges)?,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Graphdims_get(
    comm: Comm,
    nnodes: *mut c_int,
    nedges: *mut c_int,
) -> c_int {
    guard("MPI_Graphdims_get", comm, || {
        let (g, _) = graph::graph_of(comm)?;
        set(nnodes, "nnodes", g.index.len() as c_int)?;
        set(nedges, "nedges", g.edges.len() as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_get(
    comm: Comm,
    maxindex: c_int,
    maxedges: c_int,
    index: *mut c_int,
    edges: *mut c_int,
) -> c_int {
    guard("MPI_Graph_get", comm, || {
        let (g, _) = graph::graph_of(comm)?;
        let ni = g.index.len().min(cnt(maxindex)?);
        let ne = g.edges.len().min(cnt(maxedges)?);
        // SAFETY: `maxindex` and `maxedges` entries (MPI-3.1 section 7.5.5).
        let (i, e) = unsafe {
            (
                raw::array_mut(index, ni, "index")?,
                raw::array_mut(edges, ne, "edges")?,
            )
        };
        i.copy_from_slice(&g.index[..ni]);
        e.copy_from_slice(&g.edges[..ne]);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_neighbors_count(
    comm: Comm,
    rank: c_int,
    nneighbors: *mut c_int,
) -> c_int {
    guard("MPI_Graph_neighbors_count", comm, || {
        let (g, _) = graph::graph_of(comm)?;
        set(nneighbors, "nneighbors", g.neighbors(rank)?.len() as c_int)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_neighbors(
    comm: Comm,
    rank: c_int,
    maxneighbors: c_int,
    neighbors: *mut c_int,
) -> c_int {
    guard("MPI_Graph_neighbors", comm, || {
        let (g, _) = graph::graph_of(comm)?;
        let nb = g.neighbors(rank)?;
        let n = nb.len().min(cnt(maxneighbors)?);
        // SAFETY: `maxneighbors` entries (MPI-3.1 section 7.5.5).
        unsafe { raw::array_mut(neighbors, n, "neighbors") }?.copy_from_slice(&nb[..n]);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Graph_map(
    comm: Comm,
    nnodes: c_int,
    _index: *const c_int,
    _edges: *const c_int,
    newrank: *mut c_int,
) -> c_int {
    guard("MPI_Graph_map", comm, || {
        let rank = comm::rank(comm)?;
        set(
            newrank,
            "newrank",
            if rank < nnodes { rank } else { UNDEFINED },
        )
    })
}

// ---- Distributed graph topologies (MPI-3.1 section 7.5.4) ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_create_adjacent(
    comm: Comm,
    indegree: c_int,
    sources: *const c_int,
    sourceweights: *const c_int,
    outdegree: c_int,
    destinations: *const c_int,
    destweights: *const c_int,
    _info: c_int,
    _reorder: c_int,
    comm_dist_graph: *mut c_int,
) -> c_int {
    guard("MPI_Dist_graph_create_adjacent", comm, || {
        let (i, o) = (cnt(indegree)?, cnt(outdegree)?);
        // SAFETY: `indegree` sources and weights, `outdegree` destinations and weights,
        // or the weights sentinels (MPI-3.1 section 7.5.4).
        let (src, sw, dst, dw) = unsafe {
            (
                raw::array(sources, i, "sources")?,
                raw::weights(
                    sourceweights,
                    weights_sentinel(sourceweights),
                    i,
                    "sourceweights",
                )?,
                raw::array(destinations, o, "destinations")?,
                raw::weights(destweights, weights_sentinel(destweights), o, "destweights")?,
            )
        };
        let h = graph::dist_graph_create_adjacent(comm, (src, sw), (dst, dw))?;
        set(comm_dist_graph, "comm_dist_graph", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_create(
    comm: Comm,
    n: c_int,
    nodes: *const c_int,
    degrees: *const c_int,
    targets: *const c_int,
    weights: *const c_int,
    _info: c_int,
    _reorder: c_int,
    comm_dist_graph: *mut c_int,
) -> c_int {
    guard("MPI_Dist_graph_create", comm, || {
        let n = cnt(n)?;
        // SAFETY: `n` source nodes and degrees (MPI-3.1 section 7.5.4).
        let (src, deg) = unsafe {
            (
                raw::array(nodes, n, "sources")?,
                raw::array(degrees, n, "degrees")?,
            )
        };
        let m = deg.iter().try_fold(0usize, |m, &d| {
            m.checked_add(cnt(d)?)
                .ok_or_else(|| MpiError::new(class::COUNT, "too many edges"))
        })?;
        // SAFETY: the sum of the degrees in destinations and weights (or a sentinel).
        let (dst, w) = unsafe {
            (
                raw::array(targets, m, "destinations")?,
                raw::weights(weights, weights_sentinel(weights), m, "weights")?,
            )
        };
        let h = graph::dist_graph_create(comm, src, deg, dst, w)?;
        set(comm_dist_graph, "comm_dist_graph", h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_neighbors_count(
    comm: Comm,
    indegree: *mut c_int,
    outdegree: *mut c_int,
    weighted: *mut c_int,
) -> c_int {
    guard("MPI_Dist_graph_neighbors_count", comm, || {
        let g = graph::dist_graph_of(comm)?;
        set(indegree, "indegree", g.sources.len() as c_int)?;
        set(outdegree, "outdegree", g.destinations.len() as c_int)?;
        set(weighted, "weighted", c_int::from(g.weighted))
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Dist_graph_neighbors(
    comm: Comm,
    maxindegree: c_int,
    sources: *mut c_int,
    sourceweights: *mut c_int,
    maxoutdegree: c_int,
    destinations: *mut c_int,
    destweights: *mut c_int,
) -> c_int {
    guard("MPI_Dist_graph_neighbors", comm, || {
        let g = graph::dist_graph_of(comm)?;
        let ni = g.sources.len().min(cnt(maxindegree)?);
        let no = g.destinations.len().min(cnt(maxoutdegree)?);
        // SAFETY: `maxindegree` and `maxoutdegree` entries (MPI-3.1 section 7.5.4).
        unsafe { raw::array_mut(sources, ni, "sources") }?.copy_from_slice(&g.sources[..ni]);
        // SAFETY: as above.
        unsafe { raw::array_mut(destinations, no, "destinations") }?
            .copy_from_slice(&g.destinations[..no]);
        // Weights only for a weighted graph, into arrays that are not a sentinel.
        if g.weighted {
            for (p, w, n) in [
                (sourceweights, &g.source_weights, ni),
                (destweights, &g.destination_weights, no),
            ] {
                let n = n.min(w.len());
                // SAFETY: as above.
                if let Some(out) = unsafe { raw::weights_out(p, weights_sentinel(p), n) }? {
                    out.copy_from_slice(&w[..n]);
                }
            }
        }
        Ok(())
    })
}
