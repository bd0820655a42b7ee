"""The pinned reference files: :class:`MirrorFile` (mirror path, GitHub repository and commit, size, SHA-256)
and :data:`PINNED`, every file the demo uses. Re-exported by :mod:`cxreval.datasets.mirror`."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RAW_BASE_URL", "MirrorFile", "PINNED"]


RAW_BASE_URL = "https://raw.githubusercontent.com"


@dataclass(frozen=True)
class MirrorFile:
    """One pinned file: where it lies in a mirror, where it lies on GitHub, and its checksum.

    Attributes
    ----------
    local_path : str
        Path inside a mirror folder (``/``-separated).
    repo : str
        ``owner/name`` on GitHub.
    commit : str
        Full 40-hex commit.
    repo_path : str
        Path of the file in the repository at ``commit``.
    n_bytes : int
        Size in bytes.
    sha256 : str
        SHA-256 of the content.
    """

    local_path: str
    repo: str
    commit: str
    repo_path: str
    n_bytes: int
    sha256: str

    def url(self, base_url: str = RAW_BASE_URL) -> str:
        """The raw-file URL at the pinned commit."""
        return f"{base_url.rstrip('/')}/{self.repo}/{self.commit}/{self.repo_path}"

    def to_dict(self) -> dict[str, object]:
        return {
            "local_path": self.local_path,
            "repo": self.repo,
            "commit": self.commit,
            "repo_path": self.repo_path,
            "n_bytes": self.n_bytes,
            "sha256": self.sha256,
            "url": self.url(),
        }


_F = MirrorFile
_R0 = ("jrzech/reproduce-chexnet", "a011a9ab108cb03a533aeab52dc934b02a823ac8")
_R1 = ("derrick-daniel/Major-Project-CXR", "35922cc9a959bb45c3ffd6b3db1bfa4465974e8d")
_R2 = ("derrick-daniel/Major-Project-CXR", "7612518dc077d201f0230f07f3c485f759f8939b")
_R3 = ("derrick-daniel/Major-Project-CXR", "f4ecc32b8cf0a396854353e3897dd4fdcd1bd9cb")
_R4 = ("derrick-daniel/Major-Project-CXR", "b7131babe1e0d553b701208dcbe9582be3cde623")
_R5 = ("haooyuee/reproduce-chexnet-nih-chexphoto", "fa853b079f611ca79d17f61eea629fe773b5fb56")
_R6 = ("rajpurkarlab/cheXpert-test-set-labels", "a03eb3438ca55c28eb4379dd0dd09e3b38c0c414")
_R7 = ("Lasaj/emaim", "0cc2a787025f1c547fc7b7d8e4acb0b56215ad53")

PINNED: tuple[MirrorFile, ...] = (
    _F(
        "nih_fold_predictions/jrzech_densenet121.csv",
        *_R0,
        "pretrained/preds.csv",
        4188340,
        "303332d593f56dc3c8191f2a903f09043c93f7205179d03189f3eaaf6247ad40",
    ),
    _F(
        "nih_fold_predictions/dd_densenet201.csv",
        *_R1,
        "pretrained-DenseNet201/preds.csv",
        4174161,
        "8d31531185d32b7952453b9108172b421e6076801e564323c5ceb21fd790e594",
    ),
    _F(
        "nih_fold_predictions/dd_mobilenet_v2.csv",
        *_R2,
        "pretrained-MobileNet_V2/preds.csv",
        4166949,
        "8b57c0d27f5c1bd70589edc411a94ce740c8b23b17f549e6d022fe9f6e8a4fc2",
    ),
    _F(
        "nih_fold_predictions/dd_resnet50.csv",
        *_R3,
        "pretrained-ResNet50/preds.csv",
        4180402,
        "e2e714ccc3bbe56e8139cdcee073fc8a611ec0b1baa1d8efd90cad69dd447229",
    ),
    _F(
        "nih_fold_predictions/dd_resnet152.csv",
        *_R1,
        "pretrained-ResNet152/preds.csv",
        4108635,
        "87ace6c542747ada336da9493ba611c0427e6a0f13c47f791271f04dd90839ce",
    ),
    _F(
        "nih_fold_predictions/dd_densenet121_v2_logits.csv",
        *_R4,
        "results-v2/DenseNet121-v2/preds.csv",
        3791518,
        "f4ee3b64317e0f2de6385f3f57f3b93e85c32b01b71939c99160568e2fca3123",
    ),
    _F(
        "nih_fold_predictions/hy_densenet121_nih25.csv",
        *_R5,
        "results/nih_25_preds.csv",
        4194025,
        "a2724f4760c9e6df6de218de16a20bbf8645e14dd87f9f92d5d31f1840a627e4",
    ),
    _F(
        "nih_fold_predictions/hy_densenet121_nih25_lrdecay033.csv",
        *_R5,
        "results/nih_25_lr_decay033_preds.csv",
        4180176,
        "532150775b83bbdfb457c5736fc4a251ec76207ebdee93c69d29162e6bd25597",
    ),
    _F(
        "nih_fold_predictions/hy_densenet121_test1.csv",
        *_R5,
        "results/test1_preds.csv",
        4104301,
        "d6070832c01b0c9a74c6bf103a50086fa3826e73657307baac8e891cbb7362b2",
    ),
    _F(
        "nih_fold_predictions/hy_densenet121_results.csv",
        *_R5,
        "results/preds.csv",
        4119380,
        "459f2e5f729e1e3afe9944f41bf3c59568d92a0a53815198fd5379008a9c3ca7",
    ),
    _F(
        "chexpert_test/example_models/decisions/standard/drnet_decisions.csv",
        *_R6,
        "example_models/decisions/standard/drnet_decisions.csv",
        24568,
        "ccb318c84c13c80403bfff30e3c766b7e609c08fdff7790eca69e05686f7358e",
    ),
    _F(
        "chexpert_test/example_models/decisions/standard/ihil_decisions.csv",
        *_R6,
        "example_models/decisions/standard/ihil_decisions.csv",
        24568,
        "21727c399ad87c1ccbef7f1a3d95789a92d490c56a20bbb3efafb3dd1c572901",
    ),
    _F(
        "chexpert_test/example_models/decisions/standard/jfaboy_decisions.csv",
        *_R6,
        "example_models/decisions/standard/jfaboy_decisions.csv",
        24568,
        "3424839b48e449448287285ae19eea2a743ad9e85cb4a5bfa20ef30496e8e171",
    ),
    _F(
        "chexpert_test/example_models/decisions/standard/ngango2_decisions.csv",
        *_R6,
        "example_models/decisions/standard/ngango2_decisions.csv",
        24568,
        "103f760d9764cfd413e32bc8996d4885f0670a97600b732bb26adc849a30966c",
    ),
    _F(
        "chexpert_test/example_models/decisions/standard/ngango3_decisions.csv",
        *_R6,
        "example_models/decisions/standard/ngango3_decisions.csv",
        24568,
        "f2021d2e6037de42579b445369833c99a0a648d9234d800f1d7055a054acbbdc",
    ),
    _F(
        "chexpert_test/example_models/decisions/standard/sensexdr_decisions.csv",
        *_R6,
        "example_models/decisions/standard/sensexdr_decisions.csv",
        24568,
        "6066276a918ef4e51e2fe3af53339c761c4533628054025f65d3a359004d0910",
    ),
    _F(
        "chexpert_test/example_models/decisions/standard/uestc_decisions.csv",
        *_R6,
        "example_models/decisions/standard/uestc_decisions.csv",
        24568,
        "1403adb44a69ebf362a7e6a5b34c49a5e56daca63069d80b5938dc7afd96cde4",
    ),
    _F(
        "chexpert_test/example_models/decisions/standard/yww211_decisions.csv",
        *_R6,
        "example_models/decisions/standard/yww211_decisions.csv",
        24568,
        "f79493b3c908fec8f7b216ff33ee6c0f031f46cfa90b59e687e0579d1fb26ccc",
    ),
    _F(
        "chexpert_test/example_models/predictions/standard/desmond_predictions.csv",
        *_R6,
        "example_models/predictions/standard/desmond_predictions.csv",
        56500,
        "62e46bfefe05b8fe3a7c44f5c090a858d9790adf819a26583a666fea69473ba2",
    ),
    _F(
        "chexpert_test/example_models/predictions/standard/drnet_predictions.csv",
        *_R6,
        "example_models/predictions/standard/drnet_predictions.csv",
        47126,
        "23e41262846ddef569182e1be90ed43a33694df772c3c97061545ee6af6e666d",
    ),
    _F(
        "chexpert_test/example_models/predictions/standard/hieupham_predictions.csv",
        *_R6,
        "example_models/predictions/standard/hieupham_predictions.csv",
        46112,
        "2a4bcc8e29aabd358b74b3205bf4ba3608ab69ac9a865f270d3025f38a096c9f",
    ),
    _F(
        "chexpert_test/example_models/predictions/standard/ihil_predictions.csv",
        *_R6,
        "example_models/predictions/standard/ihil_predictions.csv",
        47068,
        "f9e308f444711e8ae7cc13bb3911c965bacffc0bb5c2148644917d7f3aace2ce",
    ),
    _F(
        "chexpert_test/example_models/predictions/standard/jfaboy_predictions.csv",
        *_R6,
        "example_models/predictions/standard/jfaboy_predictions.csv",
        67801,
        "0d81be5c2d2fdbdbaf1db763657f2c2d4d9ad5629f682c100818794a4fd85425",
    ),
    _F(
        "chexpert_test/example_models/predictions/standard/ngango2_predictions.csv",
        *_R6,
        "example_models/predictions/standard/ngango2_predictions.csv",
        46808,
        "b728649449c8e60a9d120bd415cf4b6c8579600667fe90ec72a2f352f8d5cf1d",
    ),
    _F(
        "chexpert_test/example_models/predictions/standard/ngango3_predictions.csv",
        *_R6,
        "example_models/predictions/standard/ngango3_predictions.csv",
        47245,
        "ad35c236742b81d4301203b4167771de76bf34a793251566ac33aa033a52e522",
    ),
    _F(
        "chexpert_test/example_models/predictions/standard/sensexdr_predictions.csv",
        *_R6,
        "example_models/predictions/standard/sensexdr_predictions.csv",
        47116,
        "ad07189095c6f758ca93bc1648ad6030638a6c631e3f7bd479606c76cb38a658",
    ),
    _F(
        "chexpert_test/example_models/predictions/standard/uestc_predictions.csv",
        *_R6,
        "example_models/predictions/standard/uestc_predictions.csv",
        47310,
        "3998f8948c602dbdfe9d4f17bc37336120f501b0167845487a516c23bd217e7b",
    ),
    _F(
        "chexpert_test/example_models/predictions/standard/yww211_predictions.csv",
        *_R6,
        "example_models/predictions/standard/yww211_predictions.csv",
        55829,
        "18645ac8ab3e58d2f22ba1109f8a0fff99fbc0c5208dd7a38a0cb68c6123e38f",
    ),
    _F(
        "chexpert_test/groundtruth.csv",
        *_R6,
        "groundtruth.csv",
        33692,
        "307325997d3260cf2a08b7d6314bb5707391fa255cf83cd9427f6d49b15867c0",
    ),
    _F(
        "chexpert_test/labeler/chexbert_labels.csv",
        *_R6,
        "labeler/chexbert_labels.csv",
        32757,
        "771a16d7873ec7c95b610fd0df040a01dacd2542c98607aa1cf71f46998ec543",
    ),
    _F(
        "chexpert_test/labeler/chexpert_labels.csv",
        *_R6,
        "labeler/chexpert_labels.csv",
        32757,
        "771a16d7873ec7c95b610fd0df040a01dacd2542c98607aa1cf71f46998ec543",
    ),
    _F(
        "chexpert_test/radiologists/benchmark_radiologists/bc4.csv",
        *_R6,
        "radiologists/benchmark_radiologists/bc4.csv",
        33693,
        "e38937132ea0b2f179ad39c72023966b9a93f5d0621537b85f10be3e45076c17",
    ),
    _F(
        "chexpert_test/radiologists/benchmark_radiologists/bc6.csv",
        *_R6,
        "radiologists/benchmark_radiologists/bc6.csv",
        33693,
        "d16737506085753bc2e074bf6aaedada60cfb94f1a43f4fc54064607e2ad9dce",
    ),
    _F(
        "chexpert_test/radiologists/benchmark_radiologists/bc8.csv",
        *_R6,
        "radiologists/benchmark_radiologists/bc8.csv",
        33693,
        "90bd6f9454d4904d248c214d57a62f613b7d481e7d9f0381f5032232a316a7b9",
    ),
    _F(
        "chexpert_test/radiologists/groundtruth/bc1_gt.csv",
        *_R6,
        "radiologists/groundtruth/bc1_gt.csv",
        33693,
        "a1087d2c9018484d608f912dd655e11c71ea0cffc25534b34da90aba4c3ed142",
    ),
    _F(
        "chexpert_test/radiologists/groundtruth/bc2_gt.csv",
        *_R6,
        "radiologists/groundtruth/bc2_gt.csv",
        33693,
        "8cc9f67bb376e327dd9623f0417bdd638b421b5ec1eacf7a905f7bba33c3b5ef",
    ),
    _F(
        "chexpert_test/radiologists/groundtruth/bc3_gt.csv",
        *_R6,
        "radiologists/groundtruth/bc3_gt.csv",
        33693,
        "eea7cfcca39732332b5d6214a903d3629c29a116c580204f334d51ac124f20d5",
    ),
    _F(
        "chexpert_test/radiologists/groundtruth/bc5_gt.csv",
        *_R6,
        "radiologists/groundtruth/bc5_gt.csv",
        33693,
        "bceae48c80e8d5a35abceb860c2ae734059874b5ac24c0a3c0d208d745b01eeb",
    ),
    _F(
        "chexpert_test/radiologists/groundtruth/bc7_gt.csv",
        *_R6,
        "radiologists/groundtruth/bc7_gt.csv",
        33693,
        "21b33ceec9951e9b0b3faf113552d1be26aac1ab485863f808025d8c6db27dec",
    ),
    _F(
        "chestxray14/official_test_list.txt",
        *_R7,
        "ChestX-ray14/test_list.txt",
        435131,
        "38ca5ef7f756092946f57c1a59faca882ed589a1ab1f72590b45dc06c6d5e1cc",
    ),
    _F(
        "chestxray14/official_train_val_list.txt",
        *_R7,
        "ChestX-ray14/train_val_list.txt",
        1470907,
        "61fbe896321c1c1c8b75f3e4f3a08e4fef6486d95ef8a667c31d4d60dca6cb81",
    ),
)
"""Every GitHub-hosted reference file the demo uses, pinned by commit and SHA-256."""

_BY_PATH = {f.local_path: f for f in PINNED}
