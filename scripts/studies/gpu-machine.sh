# Sourced, from the repository root, by the studies that run on a lent GPU machine in one call
# (run-on-gpu.sh, batch-on-gpu.sh): unpacks the matrices scripts/pack-for-gpu.sh carried into .gpu-data
# (once), makes ../shared/data name them where it is absent, and points the tools at what it carried:
# .gpu-bin (spmmc, spmmc-gpu-bench, their shared libraries) and the models folder.
[ -d .gpu-data ] || tar xJf .gpu-pack/data.tar.xz
mkdir -p ../shared
if [ ! -e ../shared/data ]; then ln -sfn "$PWD/.gpu-data" ../shared/data; fi
export LD_LIBRARY_PATH=$PWD/.gpu-bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} SPMMC_BUILD_DIR=.gpu-bin SPMMC_MODELS_DIR=$PWD/models
