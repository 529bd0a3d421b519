typedef struct px_unlisted_attrs {
    uint32_t struct_size;
} px_unlisted_attrs;
