"""Heatmaps keyed ``"<image id>/<finding>"``: an array of maps keyed (:func:`heatmap_dict`) and written as the
``.npz`` file ``cxreval localize --heatmaps`` reads (:func:`save_heatmaps`); the maps come, for example, from
:func:`cxreval.predict.class_activation_maps` or :func:`cxreval.predict.grad_cam`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._typing import PathLike
from .._validation import float_array
from ..exceptions import SchemaError
from ..findings import canonical_finding
from ._upsampling import check_finite

__all__ = ["heatmap_dict", "save_heatmaps"]


def heatmap_dict(
    maps: ArrayLike, *, image_ids: Sequence[str], findings: Sequence[str]
) -> dict[str, np.ndarray]:
    """Key maps of shape (N, K, h, w) as ``{"<image id>/<finding>": map}``, findings canonicalised.

    Parameters
    ----------
    maps : array-like of shape (n_images, n_findings, h, w)
        For example the output of :func:`cxreval.predict.class_activation_maps` or :func:`cxreval.predict.grad_cam`.
    image_ids : sequence of str, length n_images
        As in ``BBox_List_2017`` (``"00013118_008.png"``); may contain ``/`` (the key splits at the last).
    findings : sequence of str, length n_findings
        The finding of each class column, in any spelling :func:`cxreval.findings.canonical_finding`
        knows (``"Infiltrate"`` becomes ``"Infiltration"``).

    Returns
    -------
    maps : dict of str to numpy.ndarray of float64, shape (h, w)

    Raises
    ------
    SchemaError
        For maps that are not 4-D or not finite, lengths that do not match, an empty or duplicate image
        id, an unknown finding, or two columns with the same canonical finding.
    """
    m = float_array(
        maps, SchemaError("'maps' must be a numeric array of shape (n_images, n_findings, h, w).")
    )
    if m.ndim != 4 or 0 in m.shape:
        raise SchemaError(
            f"'maps' must have shape (n_images, n_findings, h, w) with no empty axis; got shape {m.shape}."
        )
    check_finite(m, "maps")
    for name, v in (("image_ids", image_ids), ("findings", findings)):
        if isinstance(v, str) or not isinstance(v, (Sequence, np.ndarray)):
            raise SchemaError(
                f"'{name}' must be a sequence of str (one per {name[:-1].replace('_', ' ')}); "
                f"got {type(v).__name__}."
            )
    ids, fs = list(image_ids), list(findings)
    if len(ids) != m.shape[0] or len(fs) != m.shape[1]:
        raise SchemaError(
            f"'maps' has shape {m.shape}: {m.shape[0]} image(s) x {m.shape[1]} finding(s), but "
            f"{len(ids)} image id(s) and {len(fs)} finding(s) were given."
        )
    for i, im in enumerate(ids):
        if not isinstance(im, str) or not im:
            raise SchemaError(f"image id {i} must be a non-empty str; got {im!r}.")
    dup = sorted({im for im in ids if ids.count(im) > 1})
    if dup:
        raise SchemaError(f"image ids must be unique; {dup[:5]} occur more than once.")
    canon = [canonical_finding(f, where=f"'findings' position {j}") for j, f in enumerate(fs)]
    seen: dict[str, int] = {}
    for j, c in enumerate(canon):
        if c in seen:
            raise SchemaError(
                f"findings {fs[seen[c]]!r} (position {seen[c]}) and {fs[j]!r} (position {j}) are "
                f"both {c!r}; give each class column a different finding."
            )
        seen[c] = j
    return {f"{im}/{c}": m[i, j] for i, im in enumerate(ids) for j, c in enumerate(canon)}


def save_heatmaps(
    path: PathLike,
    maps: ArrayLike | Mapping[str, ArrayLike],
    *,
    image_ids: Sequence[str] | None = None,
    findings: Sequence[str] | None = None,
) -> dict[str, str]:
    """Write heatmaps to a compressed ``.npz`` keyed ``"<image id>/<finding>"`` for ``cxreval localize``.

    Parameters
    ----------
    path : path-like
        The file to write (NumPy appends ``.npz`` when the name lacks it).
    maps : array-like of shape (n_images, n_findings, h, w), or mapping of str to array
        An array is keyed with ``image_ids`` and ``findings`` by :func:`heatmap_dict`; a mapping must
        already be keyed ``"<image id>/<finding>"`` (findings are canonicalised, maps must be 2-D).
    image_ids, findings : sequence of str, optional
        Required with an array, not allowed with a mapping.

    Returns
    -------
    renames : dict of str to str
        Finding spellings that were canonicalised (``{"Infiltrate": "Infiltration"}``); empty when none.

    Raises
    ------
    SchemaError
        As :func:`heatmap_dict`; for a mapping, a key without ``/``, an unknown finding, two keys for the
        same (image, finding) after canonicalisation, or a map that is not a finite 2-D array.
    """
    renames: dict[str, str] = {}
    if isinstance(maps, Mapping):
        if image_ids is not None or findings is not None:
            raise SchemaError(
                "'image_ids' and 'findings' are only for an array of maps; a mapping is already "
                "keyed '<image id>/<finding>'."
            )
        from ._evaluate import split_key
        from ._heatmaps import check_heatmaps

        keyed: dict[str, np.ndarray] = {}
        for key, m in maps.items():
            im, f = split_key(key)
            k = f"{im}/{f}"
            if k in keyed:
                raise SchemaError(f"two heatmaps for image {im!r} and finding {f!r} (key {key!r}).")
            if k != key:
                renames[key.rsplit("/", 1)[1]] = f
            keyed[k] = check_heatmaps(m, name=f"heatmap {key!r}")
    else:
        if image_ids is None or findings is None:
            raise SchemaError("'image_ids' and 'findings' are required to key an array of maps.")
        keyed = heatmap_dict(maps, image_ids=image_ids, findings=findings)
        renames = {f: canonical_finding(f) for f in findings if canonical_finding(f) != f}
    np.savez_compressed(path, **keyed)  # type: ignore[arg-type]
    return renames
