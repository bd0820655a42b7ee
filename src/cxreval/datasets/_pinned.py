"""The pinned reference files: :class:`MirrorFile` (mirror path, GitHub repository and commit, size, SHA-256)
and :data:`PINNED`, every file the demo uses (prediction and label tables, split lists, radiographs). Re-exported by :mod:`cxreval.datasets.mirror`."""

from __future__ import annotations

from dataclasses import asdict, dataclass

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
        return {**asdict(self), "url": self.url()}


_F = MirrorFile
_R0 = ("jrzech/reproduce-chexnet", "a011a9ab108cb03a533aeab52dc934b02a823ac8")
_R1 = ("derrick-daniel/Major-Project-CXR", "35922cc9a959bb45c3ffd6b3db1bfa4465974e8d")
_R2 = ("derrick-daniel/Major-Project-CXR", "7612518dc077d201f0230f07f3c485f759f8939b")
_R3 = ("derrick-daniel/Major-Project-CXR", "f4ecc32b8cf0a396854353e3897dd4fdcd1bd9cb")
_R4 = ("derrick-daniel/Major-Project-CXR", "b7131babe1e0d553b701208dcbe9582be3cde623")
_R5 = ("haooyuee/reproduce-chexnet-nih-chexphoto", "fa853b079f611ca79d17f61eea629fe773b5fb56")
_R6 = ("rajpurkarlab/cheXpert-test-set-labels", "a03eb3438ca55c28eb4379dd0dd09e3b38c0c414")
_R7 = ("Lasaj/emaim", "0cc2a787025f1c547fc7b7d8e4acb0b56215ad53")

_NIH_IMAGES: tuple[tuple[str, int, str], ...] = (
    ("00000075_000.png", 428226, "c8dc36f5ee35f9682b10e285943a6fc25adc9b9cb3c0044a5290567ff921f49b"),
    ("00001021_000.png", 429895, "c5b701bc6a81cfb65c94113f1a301f0d5a7a13ca0589971989676a5947d9a6fc"),
    ("00001369_000.png", 642372, "3bf3ffe3953bf0755a2e4c11f24188f1cd69103c056eed3a26834a972d8e6b42"),
    ("00001933_000.png", 426465, "0d84f4907203f34fa505eebf749a961c1cad308ce5f8439f7c5357e2b0c5131b"),
    ("00002123_000.png", 455927, "6b67befbf9798a98ae6a74ce0a97e34511dd43ac63daecbd4405f00f57575bb3"),
    ("00002578_000.png", 605847, "52c72dfce1ae8ebfecd1cd495b8f791416267ef7b337c8aee35badaf0e8de00a"),
    ("00003656_000.png", 381581, "ca9462171e56461e8c94140d59ae16a83a665fe31e748d3fb8b877aad466244b"),
    ("00004296_000.png", 364842, "7fc6383c7fe9e96d7a0de11cb480fcc012eb86539ab621594ec0f0288fce7c00"),
    ("00004747_000.png", 444352, "9abcf0f77698889bfd66315ccd229077595e723abed1e859f9ea7b7b85a6e674"),
    ("00005911_000.png", 390791, "9d2b98c77a0cebb6b47cd015b999eae2a6ffef6dc7ca55aad241e9e4cb9af78a"),
    ("00007219_000.png", 390099, "474ad5e0bac6f661e5b2cdb13304b3a3f27c2de9ba70de072b00b107dd4ff97a"),
    ("00008299_000.png", 414517, "a484c9774257d5fbdb3e09f1e8fa40424d597f6ae597e7a87d99e23b31626e13"),
    ("00008386_000.png", 362237, "14c55c3e6fce1c8827576d5da273dac09eabab6b4af14975b2b0f24450315895"),
    ("00009355_000.png", 392230, "d2c44f7aeb390b6c7613211d86c3177fb14281c8c2f9433aa0daee9b73a2a4cd"),
    ("00009745_000.png", 382202, "0ab30c01e912c2bf6340d696cabe55dee98f2ace3fd347b3cb9cc3df841c9991"),
    ("00010808_000.png", 396956, "8c3e98278b94bf0cac435ded30406cb058598f44437edcb51e76a181b69afc78"),
    ("00011529_000.png", 460465, "9eb186a6fafcf82e0bd14d2cf2a27e4437561d2501dabb8b663a3eb562020773"),
    ("00012415_000.png", 462777, "539b9a306a43e7dc5d18e2165576d3c2864c5fe6c9b9372088e872547485d982"),
    ("00013101_000.png", 405019, "4c9a00a1c7a240790e887492904e00f5bd4c23b4e9ec021b801cbe9ac8e8e5e7"),
    ("00013125_000.png", 371380, "2843607ee29af488cc98cac8136dc2262ea3db0775447bcf2ca8b6d31f7bb4df"),
    ("00013911_000.png", 437930, "d3a34433483cf99ad325e323a7dd88850126ae60ef31f5bc17b046dde09cce5f"),
    ("00014923_000.png", 375346, "4ea87dfb692cd52d1833a5c733bbcefaf19c47e9a0da15ec8faa54c1da70f1e7"),
    ("00015649_000.png", 456057, "27464631650f54b13bcb8d8969b014df75ba5ea22c789b5bb255a736245fda13"),
    ("00015886_000.png", 360895, "d9338262bd62ad1c2a3b6d0b19691e533bd5e5c8ec09d5a0d6df3aae095783ba"),
    ("00017145_000.png", 439287, "a10c70f23e88234f03370cb431ed33f5dde0114ecbd199ddda698e6dfddb86a9"),
    ("00018100_000.png", 443593, "71f0238fb1d076c735908790f947d8dd21497f2916dfb17b75220556e59ffc8a"),
    ("00019195_000.png", 435573, "f7f1a6108caf0030dbb1b532cb452bcdc44896a27c1f436b4066fff7de488a1a"),
    ("00020218_000.png", 346637, "c941a99d2a41d989a47a746d32c0400bad1757d67030ac16789e98c0df674e50"),
    ("00021535_000.png", 446740, "f4fb8b51561a93ba5e952cd37c8ff615ec5e94e481bc11db3739fbea09733a00"),
    ("00022084_000.png", 394210, "fd3c0d4857f2802c2f82c27a7a69ee601fbdd959c1e8566b71948e1d285a4d1c"),
    ("00022178_000.png", 462041, "a78fbd39f0fa6067b9f0b4e4d9fd5fb11e0cb3dbe259fdec7fb0f38bfb0849ff"),
    ("00022425_000.png", 422201, "0d672e45f54f3134db41d730f1d393cfd58babc4ec57b8155bfca102dcbc1bab"),
    ("00023370_000.png", 377545, "0fc57e2c09894e75f950bd944c77ec86c6d9701a30a79c048e2a2f159f7d62f2"),
    ("00025480_000.png", 465472, "b57c7d38a2a425785049bdd6f3e0c7894f364cf735e86362e93c0949b7f3da99"),
    ("00026402_000.png", 309597, "f4c79eb3926dd7052cc63f969235a730e09cd7033e225629bc15bf274232e297"),
    ("00026911_000.png", 395370, "8d570cc6d162146579dc72aa9ffc55f4387b8962c806b495d7bc78d012aae0e0"),
    ("00027266_000.png", 422025, "17602fde18e566a3ea3f97d71451c268756b925fa0c9e2f4e2d3195a7733326f"),
    ("00028235_000.png", 481523, "efc330fbe43c416db9fa1889a6a532b73f2e83774f92ea27ab812366d64d5a31"),
    ("00029219_000.png", 397529, "b540a567174ac093b0b7e97892ee48e641395a857d02350f4b483b51925cf044"),
)
"""The 39 ChestX-ray14 radiographs of the demo's image sections (1024 x 1024, 8-bit PNG): (name, bytes,
SHA-256) of ``starter_images/<name>`` in jrzech/reproduce-chexnet, mirror path ``images/nih/<name>``."""

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
    *(_F(f"images/nih/{name}", *_R0, f"starter_images/{name}", n, sha) for name, n, sha in _NIH_IMAGES),
)
"""Every GitHub-hosted reference file the demo uses, pinned by commit and SHA-256."""

_BY_PATH = {f.local_path: f for f in PINNED}
