#pragma once

#include "search/search_engine.h"

#include <QList>
#include <QStringList>

#include <optional>

namespace autocomp {

class PriceTable;

// What a study would cost at most, before anything is sent (`autocomp study --dry-run`).
//
// LLM calls per run are the search's upper bound: every iteration B×N plan calls (B parents, N plans each),
// B×N×K code calls and at most F fixes per code sample, plus two ISA-filter calls per parent with
// search.isa_filter. The first iteration has one parent (the start code), so real runs send fewer.
// Dollars: each call's input is the run's real first prompt of its kind (plan prompt with the whole menu,
// code and fix prompts on the start code), about 4 characters a token; its output 1000 tokens (what the
// engine assumes before it has seen an answer); priced with the price table, the models of an ensemble
// taking turns. A model the table does not know is listed in `unpriced` and counted as $0.
struct RunEstimate
{
    qint64 planCalls = 0;
    qint64 codeCalls = 0;
    qint64 fixCalls = 0;
    qint64 otherCalls = 0;
    qint64 calls() const { return planCalls + codeCalls + fixCalls + otherCalls; }
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    double usd = 0;
};

struct StudyEstimate
{
    int runs = 0;
    qint64 calls = 0;
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    double usd = 0;
    QStringList unpriced; // provider::model
};

RunEstimate estimateRun(const RunSetup &setup, const PriceTable &prices, QStringList *unpriced);
StudyEstimate estimateRuns(const QList<RunSetup> &setups, const PriceTable &prices);

} // namespace autocomp
