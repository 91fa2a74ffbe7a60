mod against_rg;
mod behaviour;
