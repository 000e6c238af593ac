"""Deterministic demo CRM data: French B2B accounts, contacts, a year of activities, opportunities.

Where it sits: pure (no I/O). ``generate_demo_batches`` yields ``domain.RowBatch`` objects that
``demo_database.create_demo_database`` (or a benchmark) hands to ``CrmStore.insert_batches``.
The same ``seed`` and sizes always give the same rows, byte for byte: each account draws from
its own ``random.Random`` seeded with text (hashed with SHA-512 by ``random``, so independent of
``PYTHONHASHSEED``), and every timestamp is computed from ``end``, never from the wall clock.
Rows are produced lazily, a batch at a time, so a million activities need little memory.

Activities are logged by the six Elynav agents (``elynav-sdr`` most, the dev agents rarely) and
by three people of the team.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from itertools import accumulate

from elynav_nb.crm.domain import ACCOUNT_SIZES, RowBatch, format_timestamp

__all__ = ["DEMO_END", "ELYNAV_AGENTS", "TEAM_PEOPLE", "generate_demo_batches"]

DEMO_END = datetime(2025, 6, 30, 18, 0, 0, tzinfo=UTC)
"""Default end of the demo year: activities fall in the 365 days before it."""

ELYNAV_AGENTS: tuple[str, ...] = (
    "elynav-orchestrator",
    "elynav-sdr",
    "elynav-cmo",
    "elynav-content",
    "elynav-dev-proposer",
    "elynav-dev-executor",
)
TEAM_PEOPLE: tuple[str, ...] = ("Yann", "Claire Martin", "Thomas Petit")

_AUTHORS: tuple[str, ...] = (*ELYNAV_AGENTS, *TEAM_PEOPLE)
_AUTHOR_WEIGHTS: tuple[int, ...] = (10, 40, 8, 6, 1, 1, 14, 12, 8)
_OWNERS: tuple[str, ...] = ("elynav-sdr", "Yann", "Claire Martin", "Thomas Petit")

_FAMILY_NAMES = (
    "Durand",
    "Lefèvre",
    "Moreau",
    "Girard",
    "Bonnet",
    "Fontaine",
    "Chevalier",
    "Rousseau",
    "Blanc",
    "Garnier",
    "Faure",
    "Mercier",
    "Lambert",
    "Bertrand",
    "Roux",
    "Vincent",
    "Fournier",
    "Morel",
    "Gauthier",
    "Perrin",
    "Lemaire",
    "Marchand",
    "Dupuis",
    "Caron",
    "Barbier",
    "Renaud",
    "Picard",
    "Aubert",
    "Meunier",
    "Brun",
)
_SECTOR_WORDS = (
    "Logistique",
    "Conseil",
    "Industrie",
    "Distribution",
    "Bâtiment",
    "Énergie",
    "Santé",
    "Numérique",
    "Transports",
    "Agroalimentaire",
    "Immobilier",
    "Assurances",
    "Ingénierie",
    "Emballages",
    "Textile",
    "Mécanique",
    "Imprimerie",
    "Environnement",
    "Formation",
    "Télécom",
)
_CITIES = (
    "Lyon",
    "Bordeaux",
    "Nantes",
    "Lille",
    "Toulouse",
    "Rennes",
    "Grenoble",
    "Strasbourg",
    "Marseille",
    "Montpellier",
    "Paris",
    "Nice",
    "Dijon",
    "Angers",
    "Tours",
    "Reims",
    "Rouen",
    "Annecy",
    "Brest",
    "Metz",
)
_LEGAL_FORMS = ("SAS", "SARL", "SA", "")
_INDUSTRIES = (
    "Logistique",
    "Conseil",
    "Industrie",
    "Distribution",
    "BTP",
    "Énergie",
    "Santé",
    "Logiciel",
    "Transport",
    "Agroalimentaire",
    "Immobilier",
    "Assurance",
    "Ingénierie",
    "Emballage",
    "Textile",
)
_FIRST_NAMES = (
    "Camille",
    "Julien",
    "Claire",
    "Thomas",
    "Sophie",
    "Nicolas",
    "Isabelle",
    "Antoine",
    "Marie",
    "Pierre",
    "Léa",
    "Hugo",
    "Chloé",
    "Mathieu",
    "Nathalie",
    "Olivier",
    "Émilie",
    "Sébastien",
    "Céline",
    "Laurent",
    "Manon",
    "Guillaume",
    "Sarah",
    "Maxime",
    "Aurélie",
    "François",
    "Inès",
    "Romain",
    "Hélène",
    "Benoît",
)
_CONTACT_LAST_NAMES = (
    "Martin",
    "Bernard",
    "Dubois",
    "Thomas",
    "Robert",
    "Richard",
    "Petit",
    "Leroy",
    "Moreau",
    "Simon",
    "Laurent",
    "Michel",
    "Garcia",
    "David",
    "Bertrand",
    "Roux",
    "Vincent",
    "Fournier",
    "Morel",
    "Girard",
    "André",
    "Lefebvre",
    "Mercier",
    "Dupont",
    "Lambert",
    "Bonnet",
    "François",
    "Martinez",
    "Legrand",
    "Garnier",
)
_TITLES = (
    "Directeur commercial",
    "Directrice marketing",
    "DAF",
    "DSI",
    "Responsable achats",
    "Président",
    "Directrice générale",
    "Head of Growth",
    "Responsable RH",
    "Office manager",
    "Directeur des opérations",
)
_SUBJECTS: dict[str, tuple[str, ...]] = {
    "email": (
        "Premier contact",
        "Relance suite à notre échange",
        "Envoi de la proposition",
        "Cas client {sector}",
        "Invitation au webinaire",
        "Réponse à votre question tarifaire",
    ),
    "call": ("Appel de découverte", "Qualification du besoin", "Point d'avancement", "Appel de relance"),
    "meeting": ("Démo produit", "Atelier de cadrage", "Comité de pilotage", "Rendez-vous à {city}"),
    "note": ("Compte rendu interne", "Signal d'achat repéré", "Changement d'interlocuteur", "Note de veille"),
    "linkedin": ("Demande de connexion", "Message LinkedIn", "Commentaire sur une publication", "InMail"),
}
_KINDS: tuple[str, ...] = ("email", "call", "meeting", "note", "linkedin")
_KIND_WEIGHTS: tuple[int, ...] = (40, 20, 10, 12, 18)
_BODIES = (
    "{first_name} souhaite revoir le sujet au prochain trimestre.",
    "Intérêt confirmé pour l'offre ; budget à valider par la direction financière.",
    "Pas de besoin immédiat, recontacter dans trois mois.",
    "Demande d'un devis détaillé pour le site de {city}.",
    "Échange cordial, prochaine étape : démo avec l'équipe de {first_name}.",
    "Concurrent déjà en place, contrat renouvelé jusqu'à la fin de l'année.",
    "",
)
_OPPORTUNITY_NAMES = (
    "Déploiement {city}",
    "Licence annuelle",
    "Accompagnement {sector}",
    "Pilote trois mois",
    "Extension équipe",
)
_STAGES: tuple[str, ...] = ("prospecting", "qualification", "proposal", "negotiation", "won", "lost")
_STAGE_WEIGHTS: tuple[int, ...] = (25, 20, 15, 10, 15, 15)
_STATUSES: tuple[str, ...] = ("prospect", "customer", "partner", "churned")
_STATUS_WEIGHTS: tuple[int, ...] = (70, 20, 5, 5)


_AUTHOR_CUMULATIVE = tuple(accumulate(_AUTHOR_WEIGHTS))
_KIND_CUMULATIVE = tuple(accumulate(_KIND_WEIGHTS))
_STAGE_CUMULATIVE = tuple(accumulate(_STAGE_WEIGHTS))
_STATUS_CUMULATIVE = tuple(accumulate(_STATUS_WEIGHTS))


def _ascii_slug(text: str) -> str:
    """``Lefèvre & Fils`` -> ``lefevre-fils``."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    words: list[str] = []
    current = ""
    for character in folded:
        if character.isalnum():
            current += character
        elif current:
            words.append(current)
            current = ""
    if current:
        words.append(current)
    return "-".join(words)


def _company_name(rng: random.Random) -> tuple[str, str]:
    """A company name and the word used for its domain."""
    family = rng.choice(_FAMILY_NAMES)
    sector = rng.choice(_SECTOR_WORDS)
    city = rng.choice(_CITIES)
    pattern = rng.randrange(6)
    if pattern == 0:
        base = f"{family} {sector}"
    elif pattern == 1:
        base = f"{sector} {city}"
    elif pattern == 2:
        base = f"Groupe {family}"
    elif pattern == 3:
        base = f"{family} & Fils"
    elif pattern == 4:
        base = f"Atelier {family}"
    else:
        base = f"{family}-{rng.choice(_FAMILY_NAMES)}"
    legal_form = rng.choice(_LEGAL_FORMS)
    name = f"{base} {legal_form}".strip()
    return name, base


class _WorkingHours:
    """Draws weekday timestamps (8:00-18:59 UTC) in the ``days_back`` days before ``end``, as text."""

    def __init__(self, end: datetime, days_back: int) -> None:
        self.end_text = format_timestamp(end)
        self.day_texts: list[str] = []
        for offset in range(days_back):
            day = end - timedelta(days=offset)
            while day.weekday() >= 5:  # Saturday and Sunday move back to Friday
                day -= timedelta(days=1)
            self.day_texts.append(day.date().isoformat())

    def draw(self, rng: random.Random) -> str:
        day_text = self.day_texts[rng.randrange(len(self.day_texts))]
        moment_text = f"{day_text}T{rng.randrange(8, 19):02d}:{rng.randrange(60):02d}:00Z"
        return min(moment_text, self.end_text)  # same-format UTC texts compare as times


def generate_demo_batches(
    accounts: int,
    seed: int,
    *,
    activities_per_account: int = 8,
    end: datetime = DEMO_END,
    batch_accounts: int = 1000,
) -> Iterator[RowBatch]:
    """Rows for ``accounts`` accounts with ids from 1, in batches of ``batch_accounts`` accounts.

    Each account gets 1-5 contacts, 0 to ``2 * activities_per_account`` activities over the year
    before ``end`` (so about ``activities_per_account`` on average) and 0-2 opportunities.
    """
    if accounts < 0 or activities_per_account < 0 or batch_accounts < 1:
        raise ValueError("accounts and activities_per_account must be >= 0, batch_accounts >= 1")
    last_year = _WorkingHours(end, 365)
    year_before = _WorkingHours(end - timedelta(days=365), 365)
    used_domains: set[str] = set()
    next_contact_id = 1
    next_activity_id = 1
    next_opportunity_id = 1
    batch = RowBatch()
    for account_id in range(1, accounts + 1):
        rng = random.Random(f"elynav-crm-demo:{seed}:{account_id}")
        name, domain_word = _company_name(rng)
        domain_stem = _ascii_slug(domain_word)
        domain_name = f"{domain_stem}.fr"
        suffix = 2
        while domain_name in used_domains:
            domain_name = f"{domain_stem}-{suffix}.fr"
            suffix += 1
        used_domains.add(domain_name)
        city = rng.choice(_CITIES)
        sector = rng.choice(_SECTOR_WORDS)
        account_created_text = year_before.draw(rng)
        batch.accounts.append(
            (
                account_id,
                name,
                domain_name,
                rng.choice(_INDUSTRIES),
                rng.choice(ACCOUNT_SIZES),
                "FR",
                rng.choices(_STATUSES, cum_weights=_STATUS_CUMULATIVE)[0],
                rng.choice(_OWNERS),
                account_created_text,
                account_created_text,
            )
        )

        contact_ids: list[int] = []
        contact_first_names: list[str] = []
        used_emails: set[str] = set()
        for _ in range(rng.randint(1, 5)):
            first_name = rng.choice(_FIRST_NAMES)
            last_name = rng.choice(_CONTACT_LAST_NAMES)
            local_part = f"{_ascii_slug(first_name)}.{_ascii_slug(last_name)}".replace("-", "")
            email = f"{local_part}@{domain_name}"
            number = 2
            while email in used_emails:
                email = f"{local_part}{number}@{domain_name}"
                number += 1
            used_emails.add(email)
            phone = (
                f"+33 6 {rng.randrange(100):02d} {rng.randrange(100):02d} {rng.randrange(100):02d} "
                f"{rng.randrange(100):02d}"
            )
            batch.contacts.append(
                (
                    next_contact_id,
                    account_id,
                    first_name,
                    last_name,
                    email,
                    rng.choice(_TITLES),
                    phone,
                    account_created_text,
                    account_created_text,
                )
            )
            contact_ids.append(next_contact_id)
            contact_first_names.append(first_name)
            next_contact_id += 1

        for _ in range(rng.randint(0, 2 * activities_per_account)):
            kind = rng.choices(_KINDS, cum_weights=_KIND_CUMULATIVE)[0]
            contact_index = rng.randrange(len(contact_ids))
            contact_id: int | None = contact_ids[contact_index] if kind != "note" else None
            subject = rng.choice(_SUBJECTS[kind]).format(sector=sector, city=city)
            body = rng.choice(_BODIES).format(first_name=contact_first_names[contact_index], city=city)
            occurred_text = last_year.draw(rng)
            batch.activities.append(
                (
                    next_activity_id,
                    account_id,
                    contact_id,
                    kind,
                    subject,
                    body,
                    occurred_text,
                    rng.choices(_AUTHORS, cum_weights=_AUTHOR_CUMULATIVE)[0],
                    occurred_text,
                )
            )
            next_activity_id += 1

        for _ in range(rng.choices((0, 1, 2), (50, 35, 15))[0]):
            stage = rng.choices(_STAGES, cum_weights=_STAGE_CUMULATIVE)[0]
            amount = float(rng.randrange(20, 1000) * 250)
            close_date = (end + timedelta(days=rng.randrange(-180, 120))).date().isoformat()
            opened_text = last_year.draw(rng)
            batch.opportunities.append(
                (
                    next_opportunity_id,
                    account_id,
                    rng.choice(_OPPORTUNITY_NAMES).format(city=city, sector=sector),
                    stage,
                    amount,
                    close_date,
                    opened_text,
                    opened_text,
                )
            )
            next_opportunity_id += 1

        if len(batch.accounts) >= batch_accounts:
            yield batch
            batch = RowBatch()
    if batch.accounts:
        yield batch
