//! Cartesian topologies in `mpi.h` (MPI-3.1 chapter 7): create, coordinates, shift and
//! sub-grids. Thin shells over `topo`; never sends a message itself.

use super::*;

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
        let cart = Cart {
            dims: d.to_vec(),
            periods: p.iter().map(|&x| x != 0).collect(),
        };
        set(comm_cart, "comm_cart", topo::cart_create(comm, cart)?)
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
        set(ndims, "ndims", cart.dims.len() as c_int)
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
        let n = cart.dims.len().min(cnt(maxdims)?);
        let me = cart.coords(rank)?;
        // SAFETY: `maxdims` entries in each array (MPI-3.1 section 7.5.5).
        let (d, p, c) = unsafe {
            (
                raw::array_mut(dims, n, "dims")?,
                raw::array_mut(periods, n, "periods")?,
                raw::array_mut(coords, n, "coords")?,
            )
        };
        for i in 0..n {
            d[i] = cart.dims[i];
            p[i] = c_int::from(cart.periods[i]);
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
        let c = unsafe { raw::array(coords, cart.dims.len(), "coords") }?;
        set(rank, "rank", cart.rank(c)?)
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
        let me = cart.coords(rank)?;
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
        let (s, d) = cart.shift(rank, direction, disp)?;
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
        let r = unsafe { raw::array(remain_dims, cart.dims.len(), "remain_dims") }?;
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
